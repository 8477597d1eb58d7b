//! What the terminal UI shows, as plain state, and how it is drawn.
//!
//! [`View`] is updated from the network's [`Update`]s and from keys; it
//! never touches the terminal. [`render`] draws it, so tests can draw a view
//! on ratatui's `TestBackend` and read the screen.

use bingo::{
    Board, Disconnect, Ending, Extensions, Flag, GameEvent, GameResult, Outcome, Role, Settings,
    Side,
};
use bingo_net::{Update, UserInput as Input};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// Chat and notices kept for the chat pane.
const LOG_LINES: usize = 200;

/// What the keyboard is typing into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A number to call.
    Number,
    /// A chat line.
    Chat,
}

/// What a key asks the UI loop to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Nothing outside the view.
    None,
    /// Pass this to the game.
    Send(Input),
    /// Leave: tell the game (if still on) and close the UI.
    Quit,
}

/// Who said a line in the chat pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Speaker {
    Me,
    Peer,
    /// The program itself (connections, refused calls...).
    Notice,
}

/// The state of the screen.
#[derive(Debug, Clone)]
pub struct View {
    role: Role,
    game: usize,
    settings: Option<Settings>,
    extensions: Extensions,
    board: Option<Board>,
    calls: Vec<u16>,
    turn: Option<Side>,
    last_call: Option<(Side, u16, Flag)>,
    cursor: (usize, usize),
    mode: Mode,
    input: String,
    log: Vec<(Speaker, String)>,
    decided: Option<Outcome>,
    ending: Option<Ending>,
    confirm_quit: bool,
    network_done: bool,
    /// The game could not even start (cannot listen, cannot connect, the
    /// host is busy): the screen's one message.
    failure: Option<String>,
}

impl View {
    /// A blank screen for the host or the guest.
    pub fn new(role: Role) -> View {
        View {
            role,
            game: 1,
            settings: None,
            extensions: Extensions::default(),
            board: None,
            calls: Vec::new(),
            turn: None,
            last_call: None,
            cursor: (0, 0),
            mode: Mode::Number,
            input: String::new(),
            log: Vec::new(),
            decided: None,
            ending: None,
            confirm_quit: false,
            network_done: false,
            failure: None,
        }
    }

    fn notice(&mut self, text: impl Into<String>) {
        self.say(Speaker::Notice, text.into());
    }

    fn say(&mut self, speaker: Speaker, text: String) {
        // Peer text comes cleaned from the session; cleaning everything
        // again keeps any future path from reaching the terminal raw.
        self.log.push((speaker, bingo::text::clean(&text)));
        if self.log.len() > LOG_LINES {
            self.log.remove(0);
        }
    }

    /// The network task has finished: nothing more will happen.
    pub fn network_done(&mut self) {
        if !self.network_done {
            self.network_done = true;
            if self.failure.is_none() {
                self.notice("the game is over: press q to leave");
            }
        }
    }

    /// Takes in one update from the game.
    pub fn apply(&mut self, update: Update) {
        match update {
            Update::Listening(addr) => self.notice(format!("listening on {addr}")),
            Update::NewGame(number) => {
                // The last game stays on screen until the next one starts.
                if number > 1 {
                    self.notice(format!("game {number}: waiting for a guest"));
                }
            }
            Update::Connected(Some(addr)) => self.notice(format!("connected: {addr}")),
            Update::Connected(None) => self.notice("connected"),
            Update::ChatDropped(count) => {
                self.notice(format!("{count} chat lines dropped: too many too fast"))
            }
            Update::Failed(error) => self.failure = Some(error),
            Update::Game(event) => self.apply_game(event),
        }
    }

    fn apply_game(&mut self, event: GameEvent) {
        match event {
            GameEvent::Started {
                settings,
                extensions,
                card,
            } => {
                // Keep the chat; start the rest afresh.
                *self = View {
                    game: self.game + usize::from(self.settings.is_some()),
                    log: std::mem::take(&mut self.log),
                    settings: Some(settings),
                    extensions,
                    board: Some(Board::new(card)),
                    ..View::new(self.role)
                };
            }
            GameEvent::Turn(side) => self.turn = Some(side),
            GameEvent::Called {
                by, number, flag, ..
            } => {
                if let Some(board) = &mut self.board {
                    board.mark(number);
                }
                self.calls.push(number);
                self.last_call = Some((by, number, flag));
            }
            GameEvent::Chat { from, text } => {
                let speaker = match from {
                    Side::Me => Speaker::Me,
                    Side::Peer => Speaker::Peer,
                };
                self.say(speaker, text);
            }
            GameEvent::Rejected(reason) => self.notice(reason),
            GameEvent::Decided(outcome) => {
                self.decided = Some(outcome);
                self.turn = None;
            }
            // Shown by the driver as `Connected`, with the address.
            GameEvent::Joined(_) => {}
            GameEvent::Suspended => self.notice("connection lost: waiting for it to come back"),
            GameEvent::Reconnecting => self.notice("trying to reconnect..."),
            GameEvent::Resumed => self.notice("connection back: the game goes on"),
            GameEvent::Ended(Ending::Disconnected(
                why @ (Disconnect::ConnectFailed(_) | Disconnect::HostBusy),
            )) if self.board.is_none() => self.failure = Some(why.to_string()),
            GameEvent::Ended(ending) => {
                self.turn = None;
                if !matches!(ending, Ending::Result { .. }) {
                    self.notice(format!("game over: {ending}"));
                }
                self.ending = Some(ending);
            }
        }
    }

    /// Whether a game is under way (started and not over).
    pub fn is_playing(&self) -> bool {
        self.board.is_some() && !self.is_over()
    }

    fn is_over(&self) -> bool {
        self.ending.is_some() || self.network_done
    }

    /// Handles one key press.
    pub fn key(&mut self, key: KeyEvent) -> Command {
        if self.failure.is_some() {
            // The one message has been read: any key leaves.
            return Command::Quit;
        }
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if self.is_over() {
            return match key.code {
                KeyCode::Char('q') => Command::Quit,
                _ if ctrl_c => Command::Quit,
                KeyCode::Char('n') if !self.network_done => self.new_game(),
                _ => Command::None,
            };
        }
        // Quitting asks first: `q` (or Ctrl-C) asks, a second confirms,
        // Esc cancels, and any other key withdraws the request.
        if key.code == KeyCode::Char('q') && self.mode == Mode::Number || ctrl_c {
            if self.confirm_quit || !self.is_playing() {
                return Command::Quit;
            }
            self.confirm_quit = true;
            return Command::None;
        }
        if std::mem::take(&mut self.confirm_quit) {
            // Esc only cancels; any other key cancels and does its job.
            if key.code == KeyCode::Esc {
                return Command::None;
            }
        }
        match self.mode {
            Mode::Chat => self.chat_key(key.code),
            Mode::Number => self.number_key(key.code),
        }
    }

    /// Back to waiting, for the next game.
    fn new_game(&mut self) -> Command {
        let waiting = match self.role {
            Role::Host => "waiting for a guest...",
            Role::Guest => "connecting...",
        };
        *self = View {
            game: self.game,
            log: std::mem::take(&mut self.log),
            settings: self.settings,
            ..View::new(self.role)
        };
        self.board = None;
        self.notice(waiting);
        Command::Send(Input::NewGame)
    }

    fn chat_key(&mut self, code: KeyCode) -> Command {
        match code {
            KeyCode::Enter => {
                self.mode = Mode::Number;
                let text = std::mem::take(&mut self.input);
                if text.trim().is_empty() {
                    Command::None
                } else {
                    Command::Send(Input::Chat(text))
                }
            }
            KeyCode::Esc | KeyCode::Tab => {
                self.mode = Mode::Number;
                self.input.clear();
                Command::None
            }
            KeyCode::Backspace => {
                self.input.pop();
                Command::None
            }
            KeyCode::Char(c) => {
                if self.input.len() < bingo::message::MAX_CHAT - 4 {
                    self.input.push(c);
                }
                Command::None
            }
            _ => Command::None,
        }
    }

    fn number_key(&mut self, code: KeyCode) -> Command {
        let size = self.settings.map_or(1, |s| s.size());
        match code {
            // Esc only clears what is typed; it never leaves.
            KeyCode::Esc => self.input.clear(),
            KeyCode::Tab | KeyCode::Char('c') | KeyCode::Char('t') => {
                self.mode = Mode::Chat;
                self.input.clear();
            }
            KeyCode::Char(d) if d.is_ascii_digit() && self.input.len() < 3 => self.input.push(d),
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::Up | KeyCode::Char('k') => self.cursor.0 = self.cursor.0.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.cursor.0 = (self.cursor.0 + 1).min(size - 1),
            KeyCode::Left | KeyCode::Char('h') => self.cursor.1 = self.cursor.1.saturating_sub(1),
            KeyCode::Right | KeyCode::Char('l') => {
                self.cursor.1 = (self.cursor.1 + 1).min(size - 1)
            }
            KeyCode::Enter | KeyCode::Char(' ') => return self.enter(),
            _ => {}
        }
        Command::None
    }

    /// Calls the typed number, or the one under the cursor.
    fn enter(&mut self) -> Command {
        let typed = std::mem::take(&mut self.input);
        let number = if typed.is_empty() {
            let Some(board) = &self.board else {
                return Command::None;
            };
            let (row, col) = self.cursor;
            board.card().at(row, col)
        } else {
            match typed.parse() {
                Ok(k) => k,
                Err(_) => return Command::None,
            }
        };
        if let Some(board) = &self.board
            && let Some(cell) = board.card().position(number)
        {
            self.cursor = cell;
        }
        Command::Send(Input::Call(number))
    }
}

/// The smallest screen that shows a card of `size` (5x5 before the size is
/// known) with the panels around it: (width, height).
pub fn needed_size(size: Option<usize>) -> (u16, u16) {
    let size = size.unwrap_or(5);
    let card = (card_width(size) as u16 + 2).max(26);
    let middle = (size as u16 + 4).max(13);
    (card + 16, middle + 5)
}

/// Draws the whole screen.
pub fn render(frame: &mut Frame, view: &View) {
    let area = frame.area();
    if let Some(failure) = &view.failure {
        return render_message(frame, "CANNOT PLAY", failure, "press any key to leave");
    }
    let (width, height) = needed_size(view.settings.map(|s| s.size()));
    if area.width < width || area.height < height {
        let text = format!(
            "this card needs {width}x{height}; the terminal is {}x{}",
            area.width, area.height
        );
        return render_message(frame, "TERMINAL TOO SMALL", &text, "enlarge it, or q: quit");
    }
    let [title, middle, input, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(8),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(title_line(view)), title);

    let card_width = view
        .settings
        .map_or(24, |s| card_width(s.size()) as u16 + 2)
        .max(26);
    let [left, right] =
        Layout::horizontal([Constraint::Length(card_width), Constraint::Min(16)]).areas(middle);
    render_card(frame, view, left);
    let [status, chat] =
        Layout::vertical([Constraint::Length(10), Constraint::Min(3)]).areas(right);
    render_status(frame, view, status);
    render_chat(frame, view, chat);
    render_input(frame, view, input);
    let (keys, style) = footer(view);
    frame.render_widget(Paragraph::new(keys).style(style), help);
}

/// The keys that work now, and only those.
fn footer(view: &View) -> (&'static str, Style) {
    let plain = Style::new().fg(Color::DarkGray);
    if view.is_over() {
        if view.network_done {
            return ("q: quit", plain);
        }
        return ("n: new game · q: quit", plain);
    }
    if view.confirm_quit {
        let loud = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
        return ("leave the game? q: yes, leave · Esc: no, stay", loud);
    }
    match (view.mode, view.board.is_some()) {
        (Mode::Chat, _) => ("type a message · Enter: send · Esc: back to numbers", plain),
        (Mode::Number, true) => (
            "0-9 Enter: call · arrows Enter: call the cell · Esc: clear · Tab: chat · q: quit",
            plain,
        ),
        (Mode::Number, false) => ("q: quit", plain),
    }
}

/// One message in the middle of an otherwise empty screen.
fn render_message(frame: &mut Frame, title: &str, text: &str, keys: &str) {
    let bold = Style::new().add_modifier(Modifier::BOLD);
    let lines = vec![
        Line::from(Span::styled(title.to_owned(), bold.fg(Color::Red))),
        Line::default(),
        Line::from(text.to_owned()),
        Line::default(),
        Line::from(Span::styled(
            keys.to_owned(),
            Style::new().fg(Color::DarkGray),
        )),
    ];
    frame.render_widget(
        Paragraph::new(lines)
            .block(Block::bordered().title(" madang bingo "))
            .wrap(Wrap { trim: true }),
        frame.area(),
    );
}

fn title_line(view: &View) -> Line<'static> {
    let mut text = format!(" madang bingo · {}", view.role);
    if view.game > 1 {
        text.push_str(&format!(" · game {}", view.game));
    }
    if let Some(s) = view.settings {
        text.push_str(&format!(
            " · {0}x{0} · {1} lines to win · {2} calls first",
            s.size(),
            s.lines(),
            s.first()
        ));
    }
    Line::from(Span::styled(
        text,
        Style::new().add_modifier(Modifier::BOLD).fg(Color::Cyan),
    ))
}

/// Characters per cell: a cursor mark, the number, a space (no mark above
/// 9x9 so that 15x15 fits in 80 columns).
fn cell_width(size: usize) -> usize {
    if size >= 10 {
        4
    } else {
        4.min(2 + (size * size).to_string().len())
    }
}

fn card_width(size: usize) -> usize {
    cell_width(size) * size
}

fn render_card(frame: &mut Frame, view: &View, area: Rect) {
    let block = Block::bordered().title(" your card ");
    let Some(board) = &view.board else {
        frame.render_widget(
            Paragraph::new("waiting for the other player...").block(block),
            area,
        );
        return;
    };
    let size = board.card().size();
    let done = board.completed_lines();
    let width = cell_width(size);
    let digits = (size * size).to_string().len();
    let mut lines = Vec::new();
    for row in 0..size {
        let mut spans = Vec::new();
        for col in 0..size {
            let number = board.card().at(row, col);
            let cursor = view.cursor == (row, col) && view.turn == Some(Side::Me);
            // Marks in text as well as colour, for monochrome terminals.
            let called = if board.is_marked(row, col) { '*' } else { ' ' };
            let text = if width > digits + 1 {
                let mark = if cursor { '>' } else { ' ' };
                format!("{mark}{number:>digits$}{called}")
            } else {
                format!("{number:>digits$}{called}")
            };
            let mut style = Style::new();
            if board.is_marked(row, col) {
                style = style.bg(Color::Green).fg(Color::Black);
            }
            if done.iter().any(|line| line.contains(size, row, col)) {
                style = style
                    .bg(Color::Yellow)
                    .fg(Color::Black)
                    .add_modifier(Modifier::BOLD);
            }
            if cursor {
                style = style.add_modifier(Modifier::UNDERLINED | Modifier::BOLD);
            }
            spans.push(Span::styled(text, style));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::default());
    let target = view.settings.map_or(0, |s| s.lines());
    lines.push(Line::from(vec![
        Span::raw("lines "),
        Span::styled(
            format!("{} / {target}", board.completed()),
            Style::new().add_modifier(Modifier::BOLD),
        ),
    ]));
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn render_status(frame: &mut Frame, view: &View, area: Rect) {
    let mut lines = Vec::new();
    let bold = Style::new().add_modifier(Modifier::BOLD);
    if let Some(outcome) = view.decided {
        let (text, color) = match outcome.result {
            GameResult::Win => ("YOU WIN", Color::Green),
            GameResult::Loss => ("YOU LOSE", Color::Red),
            GameResult::Draw => ("DRAW", Color::Yellow),
        };
        lines.push(Line::from(Span::styled(text, bold.fg(color))));
        let caller = if outcome.caller == Side::Me {
            "your"
        } else {
            "their"
        };
        lines.push(Line::from(format!(
            "on {caller} {} {}, answered {}",
            outcome.flag.keyword(),
            outcome.number,
            outcome.answer.keyword()
        )));
        let check = match &view.ending {
            Some(Ending::Result { verification, .. }) => verification.to_string(),
            _ => "checking the other card...".into(),
        };
        lines.push(Line::from(check));
    } else if let Some(ending) = &view.ending {
        lines.push(Line::from(Span::styled(
            "GAME ABANDONED",
            bold.fg(Color::Red),
        )));
        lines.push(Line::from(ending.to_string()));
    } else {
        let turn = match view.turn {
            Some(Side::Me) => Span::styled("YOUR TURN: call a number", bold.fg(Color::Green)),
            Some(Side::Peer) => Span::raw("their turn: waiting..."),
            None => Span::raw("waiting for the game to start"),
        };
        lines.push(Line::from(turn));
    }
    if let Some((by, number, flag)) = view.last_call {
        let who = if by == Side::Me { "you" } else { "they" };
        lines.push(Line::from(format!(
            "last call: {who} {} {number}",
            flag.keyword()
        )));
    }
    if let Some(settings) = view.settings {
        lines.push(Line::from(format!(
            "calls: {} of {}",
            view.calls.len(),
            settings.max_number()
        )));
        let ext = view.extensions.names().join(", ");
        lines.push(Line::from(format!(
            "extensions: {}",
            if ext.is_empty() { "none" } else { &ext }
        )));
    }
    if !view.calls.is_empty() {
        let called: Vec<String> = view.calls.iter().map(u16::to_string).collect();
        lines.push(Line::from(format!("called: {}", called.join(" "))));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .block(Block::bordered().title(" game "))
            .wrap(Wrap { trim: true }),
        area,
    );
}

fn render_chat(frame: &mut Frame, view: &View, area: Rect) {
    let width = usize::from(area.width.saturating_sub(2)).max(1);
    let visible = usize::from(area.height.saturating_sub(2));
    // Wrapped by hand so that the newest lines are the ones kept in view.
    let mut rows: Vec<Line> = Vec::new();
    for (speaker, text) in &view.log {
        let (prefix, style) = match speaker {
            Speaker::Me => ("you: ", Style::new().fg(Color::Cyan)),
            Speaker::Peer => ("them: ", Style::new().fg(Color::Magenta)),
            Speaker::Notice => ("* ", Style::new().fg(Color::DarkGray)),
        };
        let body_style = match speaker {
            Speaker::Notice => style,
            Speaker::Me | Speaker::Peer => Style::new(),
        };
        let chars: Vec<char> = format!("{prefix}{text}").chars().collect();
        for (i, chunk) in chars.chunks(width).enumerate() {
            let chunk: String = chunk.iter().collect();
            rows.push(match chunk.strip_prefix(prefix) {
                Some(body) if i == 0 => Line::from(vec![
                    Span::styled(prefix, style),
                    Span::styled(body.to_owned(), body_style),
                ]),
                _ => Line::from(Span::styled(chunk, body_style)),
            });
        }
    }
    let newest = rows.split_off(rows.len().saturating_sub(visible));
    frame.render_widget(
        Paragraph::new(newest).block(Block::bordered().title(" chat ")),
        area,
    );
}

fn render_input(frame: &mut Frame, view: &View, area: Rect) {
    let title = match view.mode {
        Mode::Number => " number ",
        Mode::Chat => " chat message ",
    };
    let text = format!("> {}_", view.input);
    frame.render_widget(
        Paragraph::new(text).block(Block::bordered().title(title)),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use bingo::{Answer, Card, Verification};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::buffer::Buffer;

    fn screen(view: &View) -> Buffer {
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|frame| render(frame, view)).unwrap();
        terminal.backend().buffer().clone()
    }

    fn text(buffer: &Buffer) -> String {
        let area = buffer.area;
        (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buffer[(x, y)].symbol().to_owned())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Where `needle` first appears on screen, as (x, y).
    fn find(buffer: &Buffer, needle: &str) -> (u16, u16) {
        let screen = text(buffer);
        for (y, line) in screen.lines().enumerate() {
            if let Some(x) = line.find(needle) {
                // Byte offset to column: the screen text is one symbol per cell
                // but symbols like '·' take more than one byte.
                let x = line[..x].chars().count();
                return (x as u16, y as u16);
            }
        }
        panic!("{needle:?} not on screen:\n{screen}")
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn started(view: &mut View, size: usize, lines: usize) {
        let numbers: Vec<u16> = (1..=(size * size) as u16).collect();
        view.apply(Update::Game(GameEvent::Started {
            settings: Settings::new(size, lines, Role::Host).unwrap(),
            extensions: Extensions::ALL,
            card: Card::new(size, numbers).unwrap(),
        }));
    }

    fn called(view: &mut View, by: Side, number: u16) {
        view.apply(Update::Game(GameEvent::Called {
            by,
            number,
            flag: Flag::Call,
            new_lines: Vec::new(),
            completed: 0,
        }));
    }

    #[test]
    fn the_card_shows_marks_and_completed_lines() {
        let mut view = View::new(Role::Host);
        started(&mut view, 5, 5);
        for k in [1, 2, 3, 4, 5, 13] {
            called(&mut view, Side::Peer, k);
        }
        view.apply(Update::Game(GameEvent::Turn(Side::Me)));
        let buffer = screen(&view);
        let screen_text = text(&buffer);
        assert!(
            screen_text.contains("5x5 · 5 lines to win"),
            "{screen_text}"
        );
        assert!(screen_text.contains("lines 1 / 5"), "{screen_text}");
        assert!(screen_text.contains("YOUR TURN"), "{screen_text}");
        assert!(
            screen_text.contains("last call: they CALL 13"),
            "{screen_text}"
        );
        assert!(screen_text.contains("calls: 6 of 25"), "{screen_text}");
        // The first row is a completed line: yellow. 13 is marked: green.
        // 7 is neither.
        let (x, y) = find(&buffer, " 3*");
        assert_eq!(buffer[(x + 1, y)].bg, Color::Yellow);
        let (x, y) = find(&buffer, "12  13*");
        assert_eq!(buffer[(x + 4, y)].bg, Color::Green);
        assert_eq!(buffer[(x, y)].bg, Color::Reset);
        assert!(
            screen_text.contains("called: 1 2 3 4 5 13"),
            "{screen_text}"
        );
        let (x, y) = find(&buffer, " 7 ");
        assert_eq!(buffer[(x + 1, y)].bg, Color::Reset);
        // The cursor starts on the first cell.
        assert!(screen_text.contains("> 1*"), "{screen_text}");
    }

    #[test]
    fn numbers_are_typed_or_picked_with_the_cursor() {
        let mut view = View::new(Role::Guest);
        started(&mut view, 5, 5);
        view.apply(Update::Game(GameEvent::Turn(Side::Me)));
        view.key(key(KeyCode::Char('1')));
        view.key(key(KeyCode::Char('7')));
        assert!(text(&screen(&view)).contains("> 17_"));
        assert_eq!(
            view.key(key(KeyCode::Enter)),
            Command::Send(Input::Call(17))
        );
        assert_eq!(view.cursor, (3, 1), "the cursor follows the typed number");
        view.key(key(KeyCode::Right));
        view.key(key(KeyCode::Down));
        assert_eq!(
            view.key(key(KeyCode::Enter)),
            Command::Send(Input::Call(23))
        );
        for _ in 0..10 {
            view.key(key(KeyCode::Down));
        }
        assert_eq!(view.cursor.0, 4, "the cursor stays on the card");
    }

    #[test]
    fn chat_is_typed_sent_and_shown() {
        let mut view = View::new(Role::Guest);
        started(&mut view, 5, 5);
        view.key(key(KeyCode::Tab));
        for c in "hi 5".chars() {
            assert_eq!(view.key(key(KeyCode::Char(c))), Command::None);
        }
        assert!(text(&screen(&view)).contains("chat message"));
        assert_eq!(
            view.key(key(KeyCode::Enter)),
            Command::Send(Input::Chat("hi 5".into()))
        );
        view.apply(Update::Game(GameEvent::Chat {
            from: Side::Peer,
            text: "good luck".into(),
        }));
        assert!(text(&screen(&view)).contains("them: good luck"));
        // Long lines wrap, and the newest stay in view.
        let long = format!("{}END", "a".repeat(100));
        view.apply(Update::Game(GameEvent::Chat {
            from: Side::Peer,
            text: long,
        }));
        assert!(
            text(&screen(&view)).contains("aaEND"),
            "the wrapped tail is shown"
        );
    }

    #[test]
    fn the_result_and_the_deciding_call_are_shown() {
        let mut view = View::new(Role::Host);
        started(&mut view, 3, 1);
        let outcome = Outcome {
            result: GameResult::Loss,
            caller: Side::Me,
            number: 4,
            flag: Flag::Call,
            answer: Answer::Bingo,
        };
        view.apply(Update::Game(GameEvent::Decided(outcome)));
        view.apply(Update::Game(GameEvent::Ended(Ending::Result {
            outcome,
            verification: Verification::Verified,
        })));
        let screen_text = text(&screen(&view));
        assert!(screen_text.contains("YOU LOSE"), "{screen_text}");
        assert!(
            screen_text.contains("on your CALL 4, answered BINGO"),
            "{screen_text}"
        );
        assert!(screen_text.contains("verified"), "{screen_text}");
        assert_eq!(view.key(key(KeyCode::Char('q'))), Command::Quit);
    }

    #[test]
    fn a_finished_game_stays_on_screen_until_the_next_starts() {
        let mut view = View::new(Role::Host);
        started(&mut view, 3, 1);
        called(&mut view, Side::Me, 5);
        view.apply(Update::Game(GameEvent::Ended(Ending::Disconnected(
            Disconnect::Closed,
        ))));
        view.apply(Update::NewGame(2));
        let screen_text = text(&screen(&view));
        assert!(screen_text.contains("GAME ABANDONED"), "{screen_text}");
        assert!(
            screen_text.contains("game 2: waiting for a guest"),
            "{screen_text}"
        );
        started(&mut view, 3, 1);
        let screen_text = text(&screen(&view));
        assert!(!screen_text.contains("GAME ABANDONED"), "{screen_text}");
        assert!(screen_text.contains("calls: 0 of 9"), "{screen_text}");
        assert!(screen_text.contains("game 2"), "{screen_text}");
    }

    #[test]
    fn quitting_mid_game_asks_twice() {
        let mut view = View::new(Role::Host);
        started(&mut view, 5, 5);
        assert_eq!(view.key(key(KeyCode::Char('q'))), Command::None);
        let screen_text = text(&screen(&view));
        assert!(
            screen_text.contains("leave the game? q: yes, leave · Esc: no, stay"),
            "the confirming key and the way back are named: {screen_text}"
        );
        assert_eq!(view.key(key(KeyCode::Char('q'))), Command::Quit);
    }

    #[test]
    fn esc_cancels_the_request_and_other_keys_reset_it() {
        let mut view = View::new(Role::Host);
        started(&mut view, 5, 5);
        view.apply(Update::Game(GameEvent::Turn(Side::Me)));
        view.key(key(KeyCode::Char('q')));
        assert_eq!(view.key(key(KeyCode::Esc)), Command::None);
        assert!(!text(&screen(&view)).contains("leave the game?"));
        assert_eq!(
            view.key(key(KeyCode::Char('q'))),
            Command::None,
            "asks again"
        );
        // Any other key withdraws the request, and still does its job.
        view.key(key(KeyCode::Char('7')));
        assert!(text(&screen(&view)).contains("> 7_"));
        assert_eq!(
            view.key(key(KeyCode::Char('q'))),
            Command::None,
            "asks again"
        );
        // Esc alone never leaves.
        let mut view = View::new(Role::Guest);
        started(&mut view, 5, 5);
        for _ in 0..3 {
            assert_eq!(view.key(key(KeyCode::Esc)), Command::None);
        }
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(view.key(ctrl_c), Command::None, "Ctrl-C asks too");
        assert_eq!(view.key(key(KeyCode::Char('q'))), Command::Quit);
    }

    #[test]
    fn after_the_result_only_new_game_and_quit_are_offered() {
        let mut view = View::new(Role::Guest);
        started(&mut view, 3, 1);
        view.apply(Update::Game(GameEvent::Ended(Ending::Disconnected(
            Disconnect::Closed,
        ))));
        let screen_text = text(&screen(&view));
        let footer = screen_text.lines().last().unwrap().trim();
        assert_eq!(footer, "n: new game · q: quit");
        assert_eq!(view.key(key(KeyCode::Char('5'))), Command::None);
        assert_eq!(
            view.key(key(KeyCode::Char('n'))),
            Command::Send(Input::NewGame)
        );
        assert!(text(&screen(&view)).contains("connecting..."));
        assert!(
            view.key(key(KeyCode::Char('q'))) == Command::Quit,
            "before a game, q leaves"
        );
    }

    #[test]
    fn a_setup_failure_is_the_main_message() {
        let mut view = View::new(Role::Host);
        view.apply(Update::Failed(
            "cannot listen on 127.0.0.1:7000: Address in use".into(),
        ));
        view.network_done();
        let screen_text = text(&screen(&view));
        assert!(screen_text.contains("CANNOT PLAY"), "{screen_text}");
        assert!(screen_text.contains("Address in use"), "{screen_text}");
        assert!(
            screen_text.contains("press any key to leave"),
            "{screen_text}"
        );
        assert!(!screen_text.contains("waiting"), "{screen_text}");
        assert_eq!(view.key(key(KeyCode::Char('x'))), Command::Quit);

        let mut view = View::new(Role::Guest);
        view.apply(Update::Game(GameEvent::Ended(Ending::Disconnected(
            Disconnect::ConnectFailed("Connection refused (os error 111)".into()),
        ))));
        assert!(text(&screen(&view)).contains("cannot connect: Connection refused"));
    }

    #[test]
    fn a_busy_host_is_explained_in_plain_words() {
        let mut view = View::new(Role::Guest);
        view.apply(Update::Game(GameEvent::Ended(Ending::Disconnected(
            Disconnect::HostBusy,
        ))));
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|frame| render(frame, &view)).unwrap();
        let screen_text = text(terminal.backend().buffer());
        assert!(screen_text.contains("interrupted game"), "{screen_text}");
    }

    #[test]
    fn a_peers_escape_sequences_never_reach_the_screen() {
        let mut view = View::new(Role::Guest);
        started(&mut view, 5, 5);
        view.apply(Update::Game(GameEvent::Chat {
            from: Side::Peer,
            text: "\x1b]0;owned\x07\x1b[2J\nresult: win".into(),
        }));
        let buffer = screen(&view);
        let all: String = buffer.content().iter().map(|cell| cell.symbol()).collect();
        assert!(!all.contains('\x1b') && !all.contains('\x07'), "{all:?}");
    }

    #[test]
    fn a_terminal_too_small_for_the_card_says_so() {
        let mut view = View::new(Role::Host);
        started(&mut view, 15, 32);
        let mut terminal = Terminal::new(TestBackend::new(70, 24)).unwrap();
        terminal.draw(|frame| render(frame, &view)).unwrap();
        let screen_text = text(terminal.backend().buffer());
        assert!(screen_text.contains("TERMINAL TOO SMALL"), "{screen_text}");
        assert!(
            screen_text.contains("this card needs 78x24"),
            "{screen_text}"
        );
        assert_eq!(needed_size(Some(15)), (78, 24));
        let (width, height) = needed_size(Some(5));
        assert!(width <= 80 && height <= 24);
    }

    #[test]
    fn a_tiny_terminal_does_not_break_the_ui() {
        let mut view = View::new(Role::Host);
        started(&mut view, 15, 32);
        for (width, height) in [(1, 1), (20, 5), (40, 12)] {
            let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
            terminal.draw(|frame| render(frame, &view)).unwrap();
        }
    }

    #[test]
    fn a_15x15_card_fits_in_80_columns() {
        let mut view = View::new(Role::Host);
        started(&mut view, 15, 32);
        let screen_text = text(&screen(&view));
        // The last row's numbers are all on screen.
        assert!(screen_text.contains("211 212 213"), "{screen_text}");
        assert!(screen_text.contains("224 225"), "{screen_text}");
        assert!(screen_text.contains("lines 0 / 32"), "{screen_text}");
    }
}
