//! Values of the job-file language: whole numbers, sizes, durations, fractions and rank
//! lists. Sizes and durations are the core's one grammar (crate::units) with the language's
//! limits.
//!
//! ```text
//! count     digits                          16
//! size      see units                       64KiB, 1.5KiB, 4096 (whole bytes, at most 1GiB)
//! duration  see units                       10us, 1.5ms, 250 (ns); rounded to the nearest ns
//! fraction  number                          0.25
//! ranks     item{,item}   item = N | A-B    0-15,32-47  (job rank order = listed order)
//! ```
//! A number is digits with at most one `.` (no sign, no exponent).

use crate::units;

/// Largest message, duration and count the language accepts (the C runner allocates
/// message buffers, so sizes stay modest).
pub const MAX_BYTES: u64 = 1 << 30;
pub const MAX_NS: u64 = 1_000_000_000_000_000;
pub const MAX_COUNT: u64 = 1_000_000_000;
/// Ranks are below 2^24 (16,777,216 processes).
pub const MAX_RANK: u64 = (1 << 24) - 1;

/// A whole number in 0..=max.
pub fn parse_count(text: &str, max: u64) -> Result<u64, String> {
    let bad = || format!("expected a whole number, got '{text}'");
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) || text.len() > 19 {
        return Err(bad());
    }
    let v: u64 = text.parse().map_err(|_| bad())?;
    if v > max {
        return Err(format!("'{text}' is larger than {max}"));
    }
    Ok(v)
}

/// A message size in bytes (at most [`MAX_BYTES`]).
pub fn parse_size(text: &str) -> Result<u64, String> {
    units::parse_size(text, MAX_BYTES)
}

/// A duration in ns, rounded to the nearest ns (at most [`MAX_NS`]).
pub fn parse_duration(text: &str) -> Result<u64, String> {
    units::parse_duration(text, MAX_NS)
}

/// A positive fraction (at most `max`).
pub fn parse_fraction(text: &str, max: f64) -> Result<f64, String> {
    let bad = || format!("expected a number such as 0.25, got '{text}'");
    let (num, unit) = units::split_number(text).ok_or_else(bad)?;
    if !unit.is_empty() {
        return Err(bad());
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    if !(v > 0.0 && v <= max) {
        return Err(format!("'{text}' is outside (0, {max}]"));
    }
    Ok(v)
}

/// A rank list `0-15,32-47,64`: ranks in listed order; duplicates are errors.
pub fn parse_ranks(text: &str) -> Result<Vec<u32>, String> {
    let bad = |item: &str| format!("expected a rank list such as 0-15,32-47, got '{item}' in '{text}'");
    let mut out = Vec::new();
    for item in text.split(',') {
        let (a, b) = match item.split_once('-') {
            Some((a, b)) => (a, b),
            None => (item, item),
        };
        let a = parse_count(a, MAX_RANK).map_err(|_| bad(item))?;
        let b = parse_count(b, MAX_RANK).map_err(|_| bad(item))?;
        if b < a {
            return Err(format!("empty rank range '{item}' (the end is below the start)"));
        }
        if out.len() as u64 + (b - a + 1) > MAX_RANK + 1 {
            return Err(format!("more than {} ranks in '{text}'", MAX_RANK + 1));
        }
        out.extend(a as u32..=b as u32);
    }
    let mut sorted = out.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("rank {} is listed twice in '{text}'", w[0]));
    }
    Ok(out)
}

/// The rank list back as ranges, in order: [0,1,2,3,8] → "0-3,8".
pub fn format_ranks(ranks: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { ranks[i].to_string() } else { format!("{}-{}", ranks[i], ranks[j]) });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_durations_counts() {
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("2MB"), Ok(2_000_000));
        assert!(parse_size("1.3").unwrap_err().contains("whole number of bytes"));
        assert!(parse_size("2GiB").unwrap_err().contains("larger than 1GiB"));
        assert!(parse_size("1.2.3").is_err());
        assert!(parse_size("-1").is_err());
        assert_eq!(parse_duration("10us"), Ok(10_000));
        assert_eq!(parse_duration("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_duration("2.5"), Ok(3));
        assert_eq!(parse_duration("µs").ok(), None);
        assert_eq!(parse_duration("3µs"), Ok(3000));
        assert!(parse_duration("3h").unwrap_err().contains("unknown time unit 'h'"));
        assert_eq!(parse_count("17", 100), Ok(17));
        assert!(parse_count("1e3", 100).is_err());
        assert!(parse_count("101", 100).unwrap_err().contains("larger than 100"));
        assert_eq!(parse_fraction("0.25", 10.0), Ok(0.25));
        assert!(parse_fraction("0", 10.0).is_err());
    }

    #[test]
    fn rank_lists() {
        assert_eq!(parse_ranks("0-3,8"), Ok(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_ranks("5,2-3"), Ok(vec![5, 2, 3]));
        assert!(parse_ranks("0-3,2").unwrap_err().contains("rank 2 is listed twice"));
        assert!(parse_ranks("3-1").unwrap_err().contains("empty rank range"));
        assert!(parse_ranks("0-").is_err());
        assert!(parse_ranks("").is_err());
        assert_eq!(format_ranks(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_ranks(&[5, 2, 3]), "5,2-3");
    }
}
