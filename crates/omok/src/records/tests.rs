//! Records: each rendering read back, other programs' files, and hostile
//! bytes.

use std::time::Duration;

use proptest::prelude::*;
use renju::ForbiddenKind;

use super::*;

fn pt(s: &str) -> Point {
    s.parse().unwrap()
}

fn sample() -> GameRecord {
    let summary = GameSummary {
        rule: Rule::RenjuSimplified,
        moves: ["h8", "a1", "i8", "o15"]
            .iter()
            .map(|s| (pt(s), Duration::from_micros(1_500_250)))
            .collect(),
        winner: Some(Color::White),
        reason: EndReason::Timeout,
    };
    GameRecord::new(
        "17-0".into(),
        &summary,
        ["127.0.0.1:5000".into(), "[::1]:6000".into()],
        SystemTime::UNIX_EPOCH + Duration::from_millis(1234),
    )
}

fn points(r: &GameRecord) -> Vec<Point> {
    r.moves.iter().map(|m| m.point).collect()
}

#[test]
fn sgf_round_trip() {
    let r = sample();
    let sgf = r.to_sgf();
    assert!(sgf.starts_with("(;FF[4]GM[4]CA[UTF-8]"), "{sgf}");
    assert!(sgf.contains("SZ[15]RU[4]"), "{sgf}");
    assert!(sgf.contains("PW[[::1\\]:6000]RE[W+T]"), "{sgf}");
    assert!(
        sgf.contains(";B[hh]C[1.500s]\n;W[ao]C[1.500s]\n;B[ih]C[1.500s]\n;W[oa]C[1.500s])"),
        "{sgf}"
    );
    assert_eq!(GameRecord::from_sgf(&sgf).unwrap(), r);
}

#[test]
fn json_line_round_trip() {
    let r = sample();
    assert_eq!(r.moves[0].millis, Some(1500));
    let line = r.to_json_line();
    assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
    assert!(
        line.contains(r#""rule":"renju-simplified""#)
            && line.contains(r#"{"point":"h8","millis":1500}"#)
            && line.contains(r#""winner":"white","reason":"timeout""#)
            && !line.contains("setup"),
        "{line}"
    );
    let text = format!("{line}\n{line}");
    assert_eq!(
        GameRecord::from_jsonl(&text).unwrap(),
        [r.clone(), r.clone()]
    );
    assert_eq!(GameRecord::from_json_line(&line).unwrap(), r);
    assert!(matches!(
        GameRecord::from_jsonl("{}\n"),
        Err(RecordError::Json { line: 1, .. })
    ));
}

#[test]
fn every_reason_reads_back_by_name() {
    let mut reasons = EndReason::PLAIN.to_vec();
    reasons.push(EndReason::Forbidden(ForbiddenKind::DoubleFour));
    for reason in reasons {
        let r = GameRecord { reason, ..sample() };
        assert_eq!(GameRecord::from_json_line(&r.to_json_line()).unwrap(), r);
        assert_eq!(GameRecord::from_sgf(&r.to_sgf()).unwrap().reason, reason);
    }
    let line = GameRecord {
        reason: EndReason::Forbidden(ForbiddenKind::DoubleThree),
        ..sample()
    }
    .to_json_line();
    assert!(
        line.contains(r#""reason":"forbidden (double-three)""#),
        "{line}"
    );
}

#[test]
fn setup_stones_in_every_format() {
    let r = GameRecord {
        setup: vec![
            (pt("h8"), Color::Black),
            (pt("h9"), Color::White),
            (pt("j10"), Color::Black),
        ],
        moves: vec![MoveRecord {
            point: pt("a1"),
            millis: None,
        }],
        winner: None,
        reason: EndReason::Draw,
        ..sample()
    };
    assert_eq!(r.first_to_move(), Color::White);
    assert_eq!(r.color_of_move(1), Color::Black);
    let line = r.to_json_line();
    assert!(line.contains(r#""setup":[["h8","black"],["h9","white"],["j10","black"]]"#));
    assert_eq!(GameRecord::from_json_line(&line).unwrap(), r);
    let sgf = r.to_sgf();
    assert!(sgf.contains("AB[hh][jf]AW[hg]\n;W[ao])"), "{sgf}");
    assert!(sgf.contains("RE[0]"), "{sgf}");
    let back = GameRecord::from_sgf(&sgf).unwrap();
    assert_eq!(back.final_board().unwrap(), r.final_board().unwrap());
    assert_eq!((back.winner, back.reason), (None, EndReason::Draw));
    // PSQ has no setup: the stones come first as moves, same final board.
    let psq = GameRecord::from_psq(&r.to_psq()).unwrap();
    assert!(psq.setup.is_empty());
    assert_eq!(psq.final_board().unwrap(), r.final_board().unwrap());
}

#[test]
fn psq_round_trip_and_layout() {
    let r = sample();
    let psq = r.to_psq();
    assert_eq!(
        psq,
        "Piskvorky 15x15, 11:11, 0\n8,8,1500\n1,1,1500\n9,8,1500\n15,15,1500\n\
         -1\n127.0.0.1:5000\n[::1]:6000\n-1\n"
    );
    let back = GameRecord::from_psq(&psq).unwrap();
    assert_eq!(points(&back), points(&r));
    assert_eq!(back.moves[0].millis, Some(1500));
    assert_eq!(
        (back.black.as_str(), back.white.as_str()),
        ("127.0.0.1:5000", "[::1]:6000")
    );
    assert_eq!(
        (back.rule, back.winner, back.reason),
        (Rule::Freestyle, None, EndReason::Unknown)
    );
}

#[test]
fn psq_of_a_won_game_knows_the_winner() {
    // Black h8..l8 (five) against white's a1..d1.
    let text = "Piskvorky 15x15, 11:11, 0\r\n8,8,0\r\n1,1,0\r\n9,8,0\r\n2,1,0\r\n10,8,0\r\n\
                3,1,0\r\n11,8,0\r\n4,1,0\r\n12,8,0\r\npbrain-one.exe\r\npbrain-two.exe\r\n-1\r\n";
    let r = GameRecord::from_psq(text).unwrap();
    assert_eq!(r.moves.len(), 9);
    assert_eq!((r.winner, r.reason), (Some(Color::Black), EndReason::Five));
    assert_eq!(
        (r.black.as_str(), r.white.as_str()),
        ("pbrain-one.exe", "pbrain-two.exe")
    );
}

#[test]
fn other_programs_sgf() {
    // Lower-case FF[3] identifiers, a comment, unknown properties, a
    // compressed setup rectangle, a variation and a second game tree.
    let text = "\u{feff}(;FF[3]GaMe[4]SZ[15]PB[Alice \\] B]PW[Bob]RE[W+Resign]C[hello (world)]\
                AB[aa:ab]AW[ba][bb]TR[cc]\n;B[hh]C[first]\n(;W[ii]\n;B[jj])(;W[kk]))(;B[aa])";
    let r = GameRecord::from_sgf(text).unwrap();
    assert_eq!(r.setup.len(), 4);
    assert!(r.setup.contains(&(pt("a14"), Color::Black)));
    assert!(r.setup.contains(&(pt("b15"), Color::White)));
    assert_eq!(points(&r), [pt("h8"), pt("i7"), pt("j6")]);
    assert!(r.moves.iter().all(|m| m.millis.is_none()));
    assert_eq!((r.black.as_str(), r.white.as_str()), ("Alice ] B", "Bob"));
    assert_eq!(
        (r.winner, r.reason, r.rule),
        (Some(Color::White), EndReason::Unknown, Rule::Freestyle)
    );
    // Another program's renju game, with its rule code and a time result.
    let r = GameRecord::from_sgf("(;GM[4]RU[1]RE[B+T];B[hh];W[hi])").unwrap();
    assert_eq!(
        (r.rule, r.winner, r.reason),
        (Rule::Standard, Some(Color::Black), EndReason::Timeout)
    );
}

#[test]
fn read_chooses_the_format_by_content() {
    let r = sample();
    for (bytes, ext) in [
        (r.to_sgf(), Some("txt")),
        (r.to_psq(), None),
        (r.to_json_line(), Some("log")),
    ] {
        let back = GameRecord::from_bytes(bytes.as_bytes(), ext, None).unwrap();
        assert_eq!(points(&back), points(&r));
    }
    let two = format!(
        "{}{}",
        r.to_json_line(),
        GameRecord {
            id: "other".into(),
            ..r.clone()
        }
        .to_json_line()
    );
    let pick = |id| GameRecord::from_bytes(two.as_bytes(), None, id);
    assert_eq!(pick(None).unwrap().id, "other");
    assert_eq!(pick(Some("17-0")).unwrap().id, "17-0");
    assert!(matches!(
        pick(Some("nope")),
        Err(RecordError::NotFound(Some(_)))
    ));
    assert!(matches!(
        GameRecord::from_bytes(b"hello", None, None),
        Err(RecordError::UnknownFormat)
    ));
    assert!(matches!(
        GameRecord::from_bytes(b"\xff(", None, None),
        Err(RecordError::NotUtf8)
    ));
}

#[test]
fn read_a_missing_file_says_so_once() {
    let path = Path::new("/nonexistent/madang/games.jsonl");
    let err = GameRecord::read(path, None).unwrap_err();
    let chain = format!("{err}: {}", std::error::Error::source(&err).unwrap());
    assert_eq!(
        chain.matches("/nonexistent/madang/games.jsonl").count(),
        1,
        "{chain}"
    );
}

#[test]
fn bad_records_are_errors() {
    for bad in [
        "",
        "(;B[hh",
        "(;GM[1])",
        "(;SZ[19];B[hh])",
        "(;B[zz])",
        "(;B[])",
        "(;B[hh];B[ii])",
        "(;W[hh])",
        "(;B[hh];W[hh])",
        "(;AB[aa][bb][cc])",
        "(;B[hh];AB[aa])",
        "(B[hh])",
        "(;B[hh]1)",
    ] {
        assert!(GameRecord::from_sgf(bad).is_err(), "{bad:?}");
    }
    for bad in [
        "",
        "Piskvorky 20x20, 11:11, 0\n1,1,0\n",
        "Piskvorky 15x15, 11:11, 0\n0,1,0\n",
        "Piskvorky 15x15, 11:11, 0\n16,1,0\n",
        "Piskvorky 15x15, 11:11, 0\n1,1,0\n1,1,0\n",
    ] {
        assert!(GameRecord::from_psq(bad).is_err(), "{bad:?}");
    }
    let twice = r#"{"id":"x","rule":"renju","black":"","white":"","started_unix_ms":0,"moves":[{"point":"h8"},{"point":"h8"}],"winner":null,"reason":"draw"}"#;
    assert!(matches!(
        GameRecord::from_jsonl(twice),
        Err(RecordError::Occupied(_))
    ));
    let bad_reason = twice
        .replace(r#""h8"},{"point":"h8""#, r#""h8""#)
        .replace("draw", "bored");
    assert!(matches!(
        GameRecord::from_jsonl(&bad_reason),
        Err(RecordError::Json { .. })
    ));
}

#[test]
fn shown_names_are_clean() {
    assert_eq!(
        shown("\u{1b}]0;pwned\u{7}bob\nresult: won"),
        "?]0;pwned?bob?result: won"
    );
    assert_eq!(shown("a\u{202e}b"), "a?b");
    let long = "x".repeat(1000);
    assert_eq!(shown(&long).chars().count(), MAX_SHOWN_CHARS + 1);
    assert_eq!(shown("한국 h8"), "한국 h8");
}

#[test]
fn dates() {
    assert_eq!(utc_date(0), "1970-01-01");
    assert_eq!(utc_date(951_782_400_000), "2000-02-29");
    assert_eq!(utc_date(1_795_346_172_903), "2026-11-22");
    assert!(sample().to_sgf().contains("DT[1970-01-01]"));
}

#[test]
fn board_after_steps_through_the_game() {
    let r = sample();
    assert_eq!(r.board_after(0).unwrap().stone_count(), 0);
    let board = r.board_after(2).unwrap();
    assert_eq!(board.get(pt("a1")), Some(Color::White));
    assert_eq!(r.final_board().unwrap().stone_count(), 4);
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        for ext in [None, Some("sgf"), Some("psq"), Some("jsonl")] {
            let _ = GameRecord::from_bytes(&bytes, ext, None);
        }
    }

    #[test]
    fn mangled_records_never_panic(cut in 0usize..600, byte in any::<u8>(), at in 0usize..600) {
        let r = GameRecord { setup: vec![(pt("c3"), Color::Black), (pt("d4"), Color::White)], ..sample() };
        for text in [r.to_sgf(), r.to_psq(), r.to_json_line()] {
            let mut bytes = text.into_bytes();
            bytes.truncate(cut.max(1));
            if let Some(b) = bytes.get_mut(at) {
                *b = byte;
            }
            if let Ok(back) = GameRecord::from_bytes(&bytes, None, None) {
                // Whatever reads must replay.
                prop_assert!(back.final_board().is_ok());
            }
        }
    }
}
