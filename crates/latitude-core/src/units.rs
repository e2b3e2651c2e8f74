//! Sizes and durations written with units: one grammar for every input of the core (job files,
//! `--coll` specs), with the unit names `latitude.units` accepts on the Python side.
//!
//! ```text
//! size      number [unit]   B b | KiB K | MiB M | GiB G (binary) | KB kB | MB | GB (decimal)
//!                           64KiB, 1.5KiB, 4096; whole bytes
//! duration  number [unit]   ns | us µs | ms | s;  10us, 1.5ms, 250 (ns); rounded to the nearest ns
//! number    digits with at most one `.` (no sign, no exponent)
//! ```
//! Spaces around the text and between number and unit are ignored. Each caller passes its
//! own largest value (job files limit messages to 1 GiB); messages quote the text as given.

/// Split ` 12.5 KiB ` into ("12.5", "KiB"); None unless the number is digits with at most one
/// dot and at least one digit.
pub(crate) fn split_number(text: &str) -> Option<(&str, &str)> {
    let text = text.trim();
    let end = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let num = &text[..end];
    let digits = num.bytes().filter(u8::is_ascii_digit).count();
    (digits > 0 && num.len() - digits <= 1).then(|| (num, text[end..].trim_start()))
}

fn size_unit(unit: &str) -> Option<f64> {
    Some(match unit {
        "" | "B" | "b" => 1.0,
        "KiB" | "K" => 1024.0,
        "MiB" | "M" => 1048576.0,
        "GiB" | "G" => 1073741824.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        _ => return None,
    })
}

fn time_unit(unit: &str) -> Option<f64> {
    Some(match unit {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    })
}

/// A size in bytes, at most `max`.
pub fn parse_size(text: &str, max: u64) -> Result<u64, String> {
    let bad = || format!("expected a size such as 64KiB or 4096, got '{text}'");
    let (num, unit) = split_number(text).ok_or_else(bad)?;
    let mult = size_unit(unit).ok_or_else(|| format!("unknown size unit '{unit}' in '{text}' (use B, KiB, MiB, GiB, KB, MB, GB)"))?;
    let bytes = num.parse::<f64>().map_err(|_| bad())? * mult;
    if bytes.fract() != 0.0 {
        return Err(format!("'{text}' is not a whole number of bytes"));
    }
    if bytes > max as f64 {
        return Err(format!("'{text}' is larger than {}", fmt_size(max)));
    }
    Ok(bytes as u64)
}

/// A duration in ns, rounded to the nearest ns, at most `max_ns`.
pub fn parse_duration(text: &str, max_ns: u64) -> Result<u64, String> {
    let bad = || format!("expected a duration such as 10us or 1.5ms, got '{text}'");
    let (num, unit) = split_number(text).ok_or_else(bad)?;
    let mult = time_unit(unit).ok_or_else(|| format!("unknown time unit '{unit}' in '{text}' (use ns, us, ms, s)"))?;
    let ns = (num.parse::<f64>().map_err(|_| bad())? * mult).round();
    if ns > max_ns as f64 {
        return Err(format!("'{text}' is longer than {}", fmt_duration(max_ns)));
    }
    Ok(ns as u64)
}

/// 65536 → "64KiB", 1000 → "1000": the largest binary unit that divides exactly.
pub fn fmt_size(bytes: u64) -> String {
    for (unit, f) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= f && bytes.is_multiple_of(f) {
            return format!("{}{unit}", bytes / f);
        }
    }
    bytes.to_string()
}

/// 10¹⁵ → "1000000s", 1500 → "1500ns": the largest unit that divides exactly.
pub fn fmt_duration(ns: u64) -> String {
    for (unit, f) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= f && ns.is_multiple_of(f) {
            return format!("{}{unit}", ns / f);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: u64 = u64::MAX;

    #[test]
    fn every_size_spelling() {
        for (text, bytes) in [
            ("4096", 4096),
            ("8B", 8),
            ("8b", 8),
            ("64KiB", 65536),
            ("2K", 2048),
            ("1MiB", 1 << 20),
            ("1M", 1 << 20),
            ("1GiB", 1 << 30),
            ("1G", 1 << 30),
            ("64KB", 64_000),
            ("64kB", 64_000),
            ("2MB", 2_000_000),
            ("1GB", 1_000_000_000),
            ("1.5KiB", 1536),
            (".5KiB", 512),
            ("5.", 5),
            ("0", 0),
            (" 64 KiB ", 65536),
        ] {
            assert_eq!(parse_size(text, BIG), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn sizes_that_are_refused_say_why() {
        let err = |t: &str| parse_size(t, BIG).unwrap_err();
        assert_eq!(err("1.3"), "'1.3' is not a whole number of bytes");
        assert_eq!(err("8XB"), "unknown size unit 'XB' in '8XB' (use B, KiB, MiB, GiB, KB, MB, GB)");
        assert_eq!(err("-8"), "expected a size such as 64KiB or 4096, got '-8'");
        assert_eq!(err("1.2.3KiB"), "expected a size such as 64KiB or 4096, got '1.2.3KiB'");
        assert_eq!(err(""), "expected a size such as 64KiB or 4096, got ''");
        assert_eq!(err("KiB"), "expected a size such as 64KiB or 4096, got 'KiB'");
        assert_eq!(err("1e3"), "unknown size unit 'e3' in '1e3' (use B, KiB, MiB, GiB, KB, MB, GB)");
        assert_eq!(parse_size("2GiB", 1 << 30).unwrap_err(), "'2GiB' is larger than 1GiB");
        assert_eq!(parse_size("1GiB", 1 << 30), Ok(1 << 30));
        assert!(err("99999999999999999999GiB").contains("is larger than"));
    }

    #[test]
    fn every_duration_spelling() {
        for (text, ns) in
            [("250", 250), ("250ns", 250), ("10us", 10_000), ("3µs", 3000), ("1.5ms", 1_500_000), ("2s", 2_000_000_000), ("2.5", 3), (" 1 us", 1000)]
        {
            assert_eq!(parse_duration(text, BIG), Ok(ns), "{text}");
        }
        let err = |t: &str| parse_duration(t, 1_000_000_000_000_000).unwrap_err();
        assert_eq!(err("5h"), "unknown time unit 'h' in '5h' (use ns, us, ms, s)");
        assert_eq!(err("2000000s"), "'2000000s' is longer than 1000000s");
        assert_eq!(err("µs"), "expected a duration such as 10us or 1.5ms, got 'µs'");
        assert_eq!(err("-1us"), "expected a duration such as 10us or 1.5ms, got '-1us'");
    }

    #[test]
    fn formats_use_the_largest_exact_unit() {
        assert_eq!(fmt_size(65536), "64KiB");
        assert_eq!(fmt_size(1000), "1000");
        assert_eq!(fmt_size(3 << 30), "3GiB");
        assert_eq!(fmt_size(0), "0");
        assert_eq!(fmt_duration(1_000_000_000_000_000), "1000000s");
        assert_eq!(fmt_duration(1500), "1500ns");
        assert_eq!(fmt_duration(2_000), "2us");
        assert_eq!(fmt_duration(0), "0ns");
    }
}
