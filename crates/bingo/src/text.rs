//! Text from the other side, made safe to show to a person.
//!
//! `CHAT` and `ERROR` carry free text from a peer nobody vouches for. Shown
//! raw, an escape sequence in it could retitle the terminal, clear the
//! screen, move the cursor, or start a fresh line that forges the program's
//! own output (a `result:` line). Every control character (C0, DEL, C1; the
//! start of every terminal escape sequence) is replaced before display.

/// What a control character becomes: visible, so nothing silently vanishes.
pub const REPLACEMENT: char = '\u{fffd}';

/// `text` with every control character (C0 including CR, LF, ESC and BEL;
/// DEL; C1 including CSI) replaced by [`REPLACEMENT`].
pub fn clean(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| if c.is_control() { REPLACEMENT } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_line_breaks_are_defused() {
        let hostile = "\x1b]0;owned\x07\x1b[2J\r\nresult: win\u{9b}31m\u{7f}";
        let shown = clean(hostile);
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(!shown.contains('\n') && !shown.contains('\r'));
        assert_eq!(
            shown,
            "\u{fffd}]0;owned\u{fffd}\u{fffd}[2J\u{fffd}\u{fffd}result: win\u{fffd}31m\u{fffd}"
        );
        assert_eq!(clean("빙고 ok"), "빙고 ok");
    }
}
