//! The 81 published forbidden-point positions (`tests/data/renju-forbidden.txt`,
//! copied from the project's shared cases) under the official rule.

use renju::{Board, Color, Point, Rule};

struct Case {
    id: String,
    board: Board,
    forbidden: Vec<Point>,
    not_forbidden: Vec<Point>,
    exhaustive: bool,
}

fn points(s: &str) -> Vec<Point> {
    s.split_whitespace()
        .map(|t| t.parse().unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/renju-forbidden.txt");
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let fields: Vec<(&str, &str)> = block
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim(), v.trim()))
            .collect();
        let get = |k: &str| fields.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
        let Some(id) = get("id") else { continue };
        let mut board = Board::new();
        for (key, color) in [("black", Color::Black), ("white", Color::White)] {
            for p in points(get(key).unwrap_or("")) {
                board.place(p, color).unwrap();
            }
        }
        out.push(Case {
            id: id.to_owned(),
            board,
            forbidden: points(get("forbidden").unwrap_or("")),
            not_forbidden: points(get("not_forbidden").unwrap_or("")),
            exhaustive: get("exhaustive") == Some("yes"),
        });
    }
    out
}

#[test]
fn all_81_cases_under_renju() {
    let cases = cases();
    assert_eq!(cases.len(), 81);
    let mut failures = Vec::new();
    for case in &cases {
        let found: Vec<Point> = case
            .board
            .forbidden_points(Rule::Renju)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        for p in &case.forbidden {
            if !found.contains(p) {
                failures.push(format!("{}: {p} should be forbidden", case.id));
            }
        }
        for p in &case.not_forbidden {
            if found.contains(p) {
                failures.push(format!("{}: {p} should not be forbidden", case.id));
            }
        }
        if case.exhaustive {
            for p in &found {
                if !case.forbidden.contains(p) {
                    failures.push(format!("{}: {p} is forbidden but not listed", case.id));
                }
            }
        }
        for p in &found {
            assert!(
                case.board.is_forbidden(*p, Rule::Renju),
                "{}: {p} scan and point test disagree",
                case.id
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
