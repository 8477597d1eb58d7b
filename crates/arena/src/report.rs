//! The offline report: one HTML page (no scripts, no outside resources)
//! with the standings, the crosstable, every figure of the summary and an
//! SVG chart of each entrant's score over the games; the chart is also
//! written alone as SVG.

use std::fmt::Write;

use crate::game::Termination;
use crate::tournament::{Standings, Summary};

/// Escapes text for HTML and SVG (names come from users and engines).
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// The score curves (each entrant's score, 0..100%, after each game).
pub fn svg(standings: &Standings) -> String {
    let (w, h, pad) = (640.0, 240.0, 30.0);
    let n = standings.curve.len().max(2) as f64;
    let x = |i: usize| pad + (w - 2.0 * pad) * i as f64 / (n - 1.0);
    let y = |s: f64| h - pad - (h - 2.0 * pad) * s;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"11\">\n"
    );
    let _ = writeln!(out, "<rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>");
    for pct in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = writeln!(
            out,
            "<line x1=\"{pad}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"2\" y=\"{:.1}\">{}%</text>",
            w - pad,
            y(pct) + 4.0,
            pct * 100.0,
            y = y(pct)
        );
    }
    for (e, entrant) in standings.entrants.iter().enumerate() {
        let colour = COLOURS[e % COLOURS.len()];
        let points: Vec<String> = standings
            .curve
            .iter()
            .enumerate()
            .map(|(i, scores)| format!("{:.1},{:.1}", x(i), y(scores[e])))
            .collect();
        let _ = writeln!(
            out,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
            points.join(" ")
        );
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" fill=\"{colour}\">{}</text>",
            pad + 5.0,
            pad / 2.0 + 12.0 * e as f64,
            esc(&entrant.name)
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\">games: {}</text>",
        w - pad - 60.0,
        h - 8.0,
        standings.curve.len()
    );
    out.push_str("</svg>\n");
    out
}

fn elo_cell(e: Option<&crate::stats::EloEstimate>) -> String {
    match e {
        Some(e) => format!(
            "{:+.1} [{:+.1}, {:+.1}], LOS {:.1}%",
            e.elo,
            e.low,
            e.high,
            e.los * 100.0
        ),
        None => "-".into(),
    }
}

/// The whole report page.
pub fn html(title: &str, standings: &Standings, summary: &Summary) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\n<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:right}}th:first-child,td:first-child{{text-align:left}}</style></head><body>\n<h1>{t}</h1>\n<p>{} of {} games played{}.</p>\n",
        summary.games,
        summary.scheduled,
        if summary.stopped_early {
            " (stopped early)"
        } else {
            ""
        },
        t = esc(title)
    );
    out.push_str("<h2>Standings</h2>\n<table><tr><th>Entrant</th><th>Games</th><th>+</th><th>=</th><th>-</th><th>Points</th><th>Elo vs field [95%]</th><th>Moves over budget</th><th>Max overrun</th></tr>\n");
    for e in &summary.entrants {
        let s = &e.standing;
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} of {}</td><td>{} ms</td></tr>",
            esc(&s.name),
            s.wdl.games(),
            s.wdl.wins,
            s.wdl.draws,
            s.wdl.losses,
            e.points,
            elo_cell(e.elo.as_ref()),
            s.moves_over_budget,
            s.moves,
            s.max_overrun_ms
        );
    }
    out.push_str("</table>\n<h2>Crosstable</h2>\n<table><tr><th></th>");
    for e in &standings.entrants {
        let _ = write!(out, "<th>{}</th>", esc(&e.name));
    }
    out.push_str("</tr>\n");
    for (i, e) in standings.entrants.iter().enumerate() {
        let _ = write!(out, "<tr><td>{}</td>", esc(&e.name));
        for (j, wdl) in standings.crosstable[i].iter().enumerate() {
            if i == j {
                out.push_str("<td>&mdash;</td>");
            } else {
                let _ = write!(out, "<td>{} / {}</td>", wdl.points(), wdl.games());
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n<h2>Pairings</h2>\n<table><tr><th>Pairing</th><th>+ = -</th><th>Pairs 0-½-1-1½-2</th><th>Elo (games)</th><th>Elo (pairs)</th></tr>\n");
    for p in &summary.pairs {
        let c = p.pentanomial.counts;
        let _ = writeln!(
            out,
            "<tr><td>{} vs {}</td><td>{} {} {}</td><td>{}-{}-{}-{}-{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.a),
            esc(&p.b),
            p.wdl.wins,
            p.wdl.draws,
            p.wdl.losses,
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            elo_cell(p.elo.as_ref()),
            elo_cell(p.elo_pentanomial.as_ref())
        );
    }
    out.push_str("</table>\n");
    if let Some(s) = &summary.sprt {
        let _ = writeln!(
            out,
            "<h2>SPRT</h2><p>LLR {:.3} in [{:.3}, {:.3}]: {:?}</p>",
            s.llr, s.lower, s.upper, s.verdict
        );
    }
    out.push_str("<h2>Terminations</h2>\n<table><tr><th>Entrant</th>");
    for t in Termination::ALL {
        let _ = write!(out, "<th>{}</th>", t.name());
    }
    out.push_str("</tr>\n");
    for e in &standings.entrants {
        let _ = write!(out, "<tr><td>{}</td>", esc(&e.name));
        for t in Termination::ALL {
            let c = e.terminations.get(&t).copied().unwrap_or_default();
            let _ = write!(out, "<td>{}/{}/{}</td>", c.won, c.drawn, c.lost);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table><p>Cells: won/drawn/lost.</p>\n<h2>Score over the games</h2>\n");
    out.push_str(&svg(standings));
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{MoveLine, ResultLine};

    #[test]
    fn names_are_escaped_and_figures_shown() {
        let names = ["<b>bad</b>".to_owned(), "good & co".to_owned()];
        let mut st = Standings::new(&names);
        for index in 0..2 {
            st.add(&ResultLine {
                index,
                round: 0,
                opening: 0,
                black: index,
                white: 1 - index,
                black_name: names[index].clone(),
                white_name: names[1 - index].clone(),
                result: "black".into(),
                termination: Termination::Five,
                detail: String::new(),
                opening_moves: 0,
                timeout_overrun_ms: None,
                moves: vec![MoveLine {
                    point: "h8".into(),
                    ms: 3,
                    overrun_ms: 0,
                }],
            });
        }
        let summary = st.summary(2, None, false);
        let page = html("t<1>", &st, &summary);
        assert!(!page.contains("<b>bad"));
        assert!(page.contains("&lt;b&gt;bad&lt;/b&gt;"));
        assert!(page.contains("good &amp; co"));
        assert!(page.contains("<svg"));
        // One pair, each side winning with black: 1 point of 2 each.
        assert!(page.contains("<td>1 / 2</td>"));
        assert!(page.contains("0-0-1-0-0"));
    }
}
