//! Reading untrusted text: lines of bounded length (an endless line — `/dev/zero`, a file
//! without newlines — must not grow a buffer without bound) and input bytes shown in
//! messages with control characters escaped (a message stays one printable line).

use std::io::{self, BufRead};

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line of this many bytes was read into the buffer (with its `\n`, if any).
    Read(usize),
    /// End of input.
    Eof,
    /// The line is longer than the limit; the buffer holds its first `max` bytes.
    TooLong,
}

/// Read one line (up to and including `\n`) into `buf` (cleared first), reading at most
/// `max` bytes of it.
pub fn read_line<R: BufRead + ?Sized>(r: &mut R, buf: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    buf.clear();
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(if buf.is_empty() { Line::Eof } else { Line::Read(buf.len()) });
        }
        let room = max - buf.len();
        let (take, done) = match avail.iter().position(|&c| c == b'\n') {
            Some(i) if i < room => (i + 1, true),
            _ => (avail.len().min(room), false),
        };
        buf.extend_from_slice(&avail[..take]);
        r.consume(take);
        if done {
            return Ok(Line::Read(buf.len()));
        }
        if buf.len() >= max {
            return Ok(Line::TooLong);
        }
    }
}

/// `n` bytes as "64 MiB" / "1 KiB" / "10 bytes" (limits in messages).
pub fn size_text(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// Input bytes as message text: invalid UTF-8 replaced, control characters escaped.
pub fn shown(bytes: &[u8]) -> String {
    escape_controls(&String::from_utf8_lossy(bytes))
}

/// `s` with every control character written as an escape (`\n`, `\t`, `\0`, `\x1b`, …).
pub fn escape_controls(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded() {
        let mut r = io::BufReader::with_capacity(4, &b"ab\ncdefghij\nk"[..]);
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::Read(3));
        assert_eq!(buf, b"ab\n");
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::TooLong);
        assert_eq!(buf, b"cdefg");
        let mut r = io::BufReader::new(&b"abcd\n\nxy"[..]);
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::Read(5));
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::Read(1));
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::Read(2));
        assert_eq!(buf, b"xy");
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::Eof);
    }

    #[test]
    fn endless_input_stops_at_the_limit() {
        let mut r = io::BufReader::new(io::repeat(0));
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, &mut buf, 1 << 16).unwrap(), Line::TooLong);
        assert_eq!(buf.len(), 1 << 16);
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(shown(b"a\x1b[31mb\n\0\t\x7f"), "a\\x1b[31mb\\n\\0\\t\\x7f");
        assert_eq!(escape_controls("plain µs"), "plain µs");
        assert_eq!(escape_controls("\u{85}x"), "\\x85x");
        assert_eq!(size_text(64 << 20), "64 MiB");
    }
}
