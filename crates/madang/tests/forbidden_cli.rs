//! `madang omok forbidden` as other tools use it: lines in, lines out.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str], input: &str) -> Output {
    run_bytes(args, input.as_bytes())
}

fn run_bytes(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_madang"))
        .args(["omok", "forbidden"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn one_answer_line_per_position() {
    let input = "B: g8 i8 h7 h9\nmoves: h8 h9 pass i9\n\nB: W:\nW: e10 B: a10 b3 b4 b11 c12 d2 d3 d8 e8 e11 e12 e13 g8 h8 i8 j5 j12 k3 k4 k11 k13 k14 k15 l12 m5 m12 n12 o12\n";
    let o = run(&[], input);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0], "h8");
    assert_eq!(lines[1], "-");
    // A blank line gets a blank answer: answers stay aligned with the input.
    assert_eq!(lines[2], "");
    assert_eq!(lines[3], "-");
    // Listed by column, then row.
    assert_eq!(lines[4], "e14 f8 k5");
}

#[test]
fn explain_names_each_kind() {
    let input = "B: g8 i8 h7 h9\nB: c8 d8 e8 g8 h8\nB: e8 f8 g8 h10 h11 h12\n";
    let o = run(&["--explain"], input);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "h8:double-three\nf8:overline\nh8:double-four\n");
}

#[test]
fn simplified_rule_is_stricter() {
    let input = "B: f8 g8 h9 h10 W: d8 j8\n";
    assert_eq!(stdout(&run(&[], input)), "-\n");
    assert_eq!(stdout(&run(&["--rule", "renju-simplified"], input)), "h8\n");
}

#[test]
fn bad_lines_are_reported_and_the_tool_carries_on() {
    let input = "B: z9\nB: h8 h8\nB: a1 a2 a3 a4 a5\nnonsense\nB: g8 i8 h7 h9\n";
    let o = run(&[], input);
    assert!(!o.status.success());
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[..4].iter().all(|l| l.starts_with("error: ")), "{out}");
    assert!(lines[1].contains("h8"));
    assert_eq!(lines[4], "h8");
}

#[test]
fn moves_on_the_command_line() {
    let o = run(&["--moves", "g8 a1 i8 a3 h7 a5 h9 a7", "--explain"], "");
    assert!(o.status.success());
    assert_eq!(stdout(&o), "h8:double-three\n");
}

#[test]
fn a_line_that_is_not_utf8_is_an_error_for_that_line_only() {
    let o = run_bytes(&[], b"B: g8 i8 \xff h7 h9\r\nB: g8 i8 h7 h9\r\n\xc3");
    assert!(!o.status.success());
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("error: ") && lines[0].contains("UTF-8"));
    assert_eq!(lines[1], "h8");
    assert!(lines[2].contains("UTF-8"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("2 line(s) could not be read"), "{err}");
}

#[test]
fn a_huge_line_is_an_error_for_that_line_only() {
    let mut input = vec![b' '; 1 << 20];
    input.extend_from_slice(b"\nB: g8 i8 h7 h9\n");
    let o = run_bytes(&[], &input);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        ["error: line longer than 65536 bytes, ignored", "h8"]
    );
}

#[test]
fn line_numbers_on_request() {
    let input = "B: g8 i8 h7 h9\n\nnonsense\nmoves: h8\n";
    let o = run(&["--line-numbers"], input);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "1: h8");
    assert_eq!(lines[1], "2: ");
    assert!(lines[2].starts_with("3: error: "), "{out}");
    assert_eq!(lines[3], "4: -");
    let o = run(
        &["--line-numbers", "--moves", "g8 a1 i8 a3 h7 a5 h9 a7"],
        "",
    );
    assert_eq!(stdout(&o), "1: h8\n");
}

#[test]
fn help_lists_the_rules() {
    let o = run(&["--help"], "");
    let help = stdout(&o);
    for rule in ["renju", "renju-simplified", "freestyle", "standard"] {
        assert!(help.contains(rule), "{help}");
    }
    let o = run(&["--rule", "gomoku"], "");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("renju-simplified"), "{err}");
}
