//! Regressions found by `tools/fuzz_front.py`: each test pins a case the fuzzer's
//! oracle (no crash, positions inside the file, caret under the reported column)
//! once failed.

use std::path::PathBuf;

fn write_tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("snet-lang-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Bytes that are not UTF-8: the reported column is the byte column in the file (not
/// in a decoded copy where each bad byte grew to three), and later positions on the
/// line are not shifted.
#[test]
fn invalid_utf8_positions_are_file_byte_columns() {
    let src: &[u8] = b"net bad8 connect [{a} -> {\xff\xfe b}] .. $;\n";
    let p = write_tmp("bad8.snet", src);
    let err = snet_lang::compile_file(&p).unwrap_err().render();
    // 0xff is byte 27 of line 1, 0xfe byte 28, `$` byte 37.
    assert!(err.contains("bad8.snet:1:27"), "{err}");
    assert!(err.contains("bad8.snet:1:28"), "{err}");
    assert!(err.contains("bad8.snet:1:37"), "{err}");
    assert!(err.contains("not valid UTF-8"), "{err}");
    // The caret of `$` sits under it: 36 columns after the gutter `  | `.
    let caret = format!("  | {}^", " ".repeat(36));
    assert!(err.contains(&caret), "{err}");
}

/// Non-UTF-8 bytes inside comments are harmless (spec §2.1).
#[test]
fn invalid_utf8_in_comments_is_accepted() {
    let src: &[u8] = b"// caf\xe9\n/* \xff\xfe */ net okc connect [];\n";
    let p = write_tmp("okc.snet", src);
    assert!(snet_lang::compile_file(&p).is_ok());
}

/// A carriage return or another control character inside a line is shown as one
/// visible column: printed raw, a `\r` sent the terminal back to the start of the line
/// and garbled the snippet above the caret.
#[test]
fn control_characters_in_a_snippet_take_one_visible_column() {
    let src = "net ctl connect [{a} -> {\r\x0c b}] .. $;\n";
    let err = snet_lang::compile_str("ctl.snet", src)
        .unwrap_err()
        .render();
    assert!(!err.contains('\r') && !err.contains('\x0c'), "{err:?}");
    assert!(
        err.contains("1 | net ctl connect [{a} -> { \u{fffd} b}] .. $;"),
        "{err}"
    );
    // `$` is byte 36; its caret is under it.
    assert!(err.contains("ctl.snet:1:36"), "{err}");
    assert!(err.contains(&format!("  | {}^", " ".repeat(35))), "{err}");
}
