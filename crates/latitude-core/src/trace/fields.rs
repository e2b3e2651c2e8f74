//! Field-level parsing of liballprof v1 call lines (docs/reference/liballprof.md §4–§5):
//! `NAME:TSTART:FIELD:…:FIELD:TEND`, where a datatype is `code,size,extent`, a
//! communicator `handle,rank,size`, and a count list two fields `address:c0,c1,…`.
//!
//! Timestamps are µs as printed by the tracer (`%.0f`, `%f`, `1.0`, or our `%.3f`); they are
//! parsed exactly into picoseconds (`Time`) because 16-digit epoch values do not survive a
//! round trip through f64 at nanosecond resolution.

/// A trace timestamp in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Time(pub i128);

impl Time {
    /// Parse µs text (`1298365588610860`, `1.0`, `12.345678`, `1.5e3`).
    pub fn parse(s: &[u8]) -> Option<Time> {
        let mut whole: u64 = 0;
        let mut i = 0;
        while i < s.len() && s[i].is_ascii_digit() {
            whole = if i < 19 { whole * 10 + (s[i] - b'0') as u64 } else { whole.checked_mul(10)?.checked_add((s[i] - b'0') as u64)? };
            i += 1;
        }
        let int_digits = i;
        let mut frac: u64 = 0;
        let mut frac_digits = 0;
        if i < s.len() && s[i] == b'.' {
            i += 1;
            let start = i;
            while i < s.len() && s[i].is_ascii_digit() {
                if frac_digits < 6 {
                    frac = frac * 10 + (s[i] - b'0') as u64;
                    frac_digits += 1;
                } else if i == start + 6 && s[i] >= b'5' {
                    frac += 1; // round half up at the picosecond
                }
                i += 1;
            }
            if int_digits == 0 && i == start {
                return None;
            }
        } else if int_digits == 0 {
            return None;
        }
        if i < s.len() {
            // Rare: exponent notation. Parse as a float (µs) instead.
            if s[i] != b'e' && s[i] != b'E' {
                return None;
            }
            let v: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
            return (v.is_finite() && v >= 0.0).then(|| Time((v * 1e6).round() as i128));
        }
        const SCALE: [u64; 7] = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];
        Some(Time(whole as i128 * 1_000_000 + (frac * SCALE[frac_digits]) as i128))
    }

    /// Scale a duration in µs by `timemult` to an integer (Schedgen: round(Δµs × timemult)).
    pub fn scaled(d: i128, timemult: f64) -> i128 {
        let m = timemult.round();
        if m == timemult && m.abs() < 1e15 {
            // Exact for integer multipliers: round(d_ps · m / 10⁶), in i64 when it fits (i128
            // division is a library call).
            if let (Ok(d64), true) = (i64::try_from(d), m.abs() < 1e6) {
                if let Some(num) = d64.checked_mul(m as i64) {
                    let q = num.div_euclid(1_000_000);
                    return (q + i64::from(num.rem_euclid(1_000_000) >= 500_000)) as i128;
                }
            }
            let num = d * m as i128;
            let q = num.div_euclid(1_000_000);
            let r = num.rem_euclid(1_000_000);
            q + i128::from(r >= 500_000)
        } else {
            (d as f64 * timemult / 1e6).round() as i128
        }
    }
}

/// A datatype argument: the size is what message sizes need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dtype {
    pub code: u64,
    pub size: u64,
}

/// A communicator argument: raw handle and the caller's rank and the size in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CommArg {
    pub handle: u64,
    pub rank: i64,
    pub size: i64,
}

/// Cursor over the argument fields of one call line (between TSTART and TEND).
pub struct Fields<'a> {
    line: &'a [u8],
    /// Byte ranges of the argument fields.
    spans: &'a [(u32, u32)],
    next: usize,
}

/// What went wrong with a field: message without location.
pub type FieldResult<T> = Result<T, String>;

fn show(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.len() > 40 {
        format!("'{}…'", &s[..s.char_indices().nth(40).map_or(s.len(), |(i, _)| i)])
    } else {
        format!("'{s}'")
    }
}

pub fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() {
        return None;
    }
    if b.len() <= 19 {
        // Fast path: 19 digits cannot overflow.
        let mut v: u64 = 0;
        for &c in b {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return parse_hex(b);
            }
            v = v * 10 + d as u64;
        }
        return Some(v);
    }
    let mut v: u64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return parse_hex(b);
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

/// `0x…` (some tools print addresses as %p).
fn parse_hex(b: &[u8]) -> Option<u64> {
    if b.len() > 2 && (b.starts_with(b"0x") || b.starts_with(b"0X")) {
        u64::from_str_radix(std::str::from_utf8(&b[2..]).ok()?, 16).ok()
    } else {
        None
    }
}

pub fn parse_i64(b: &[u8]) -> Option<i64> {
    match b.first() {
        Some(c) if c.is_ascii_digit() && b.len() <= 18 => {
            // Fast path: 18 digits fit.
            let mut v: i64 = 0;
            for &c in b {
                let d = c.wrapping_sub(b'0');
                if d > 9 {
                    return None;
                }
                v = v * 10 + d as i64;
            }
            Some(v)
        }
        Some(b'-') => {
            let v = parse_u64(&b[1..])?;
            if v > i64::MAX as u64 + 1 {
                None
            } else {
                Some((v as i64).wrapping_neg())
            }
        }
        _ => parse_u64(b).and_then(|v| i64::try_from(v).ok()),
    }
}

impl<'a> Fields<'a> {
    pub fn new(line: &'a [u8], spans: &'a [(u32, u32)]) -> Fields<'a> {
        Fields { line, spans, next: 0 }
    }

    pub fn count(&self) -> usize {
        self.spans.len()
    }

    fn take(&mut self, what: &str) -> FieldResult<(usize, &'a [u8])> {
        let k = self.next;
        let &(a, b) = self.spans.get(k).ok_or_else(|| format!("missing field {} ({what})", k + 1))?;
        self.next += 1;
        Ok((k + 1, &self.line[a as usize..b as usize]))
    }

    /// An address or raw handle (unsigned; `0x…` accepted).
    pub fn addr(&mut self, what: &str) -> FieldResult<u64> {
        let (k, f) = self.take(what)?;
        parse_u64(f).ok_or_else(|| format!("field {k} ({what}): expected an address, got {}", show(f)))
    }

    pub fn int(&mut self, what: &str) -> FieldResult<i64> {
        let (k, f) = self.take(what)?;
        parse_i64(f).ok_or_else(|| format!("field {k} ({what}): expected an integer, got {}", show(f)))
    }

    /// A count: a non-negative integer.
    pub fn count_arg(&mut self, what: &str) -> FieldResult<u64> {
        let (k, f) = self.take(what)?;
        match parse_i64(f) {
            Some(v) if v >= 0 => Ok(v as u64),
            Some(v) => Err(format!("field {k} ({what}): negative count {v}")),
            None => Err(format!("field {k} ({what}): expected a count, got {}", show(f))),
        }
    }

    fn triple(&mut self, what: &str, form: &str) -> FieldResult<(usize, [&'a [u8]; 3])> {
        let (k, f) = self.take(what)?;
        let mut cut = [0usize; 2];
        let mut n = 0;
        for (i, &c) in f.iter().enumerate() {
            if c == b',' {
                if n == 2 {
                    n = 3;
                    break;
                }
                cut[n] = i;
                n += 1;
            }
        }
        if n != 2 {
            return Err(format!("field {k} ({what}): expected {form}, got {}", show(f)));
        }
        Ok((k, [&f[..cut[0]], &f[cut[0] + 1..cut[1]], &f[cut[1] + 1..]]))
    }

    /// `code,size,extent`; the extent is not used (old Fortran traces print garbage there).
    pub fn dtype(&mut self, what: &str) -> FieldResult<Dtype> {
        let (k, [code, size, _]) = self.triple(what, "a datatype code,size,extent")?;
        let bad = || format!("field {k} ({what}): expected a datatype code,size,extent, got {}", show(&[code, b",", size].concat()));
        let code = parse_u64(code).ok_or_else(bad)?;
        let size = parse_i64(size).filter(|&s| s >= 0).ok_or_else(bad)? as u64;
        Ok(Dtype { code, size })
    }

    /// `handle,rank,size`
    pub fn comm(&mut self, what: &str) -> FieldResult<CommArg> {
        let (k, [h, r, s]) = self.triple(what, "a communicator handle,rank,size")?;
        let bad = || format!("field {k} ({what}): expected a communicator handle,rank,size, got {}", show(&[h, b",", r, b",", s].concat()));
        let handle = parse_u64(h).ok_or_else(bad)?;
        let rank = parse_i64(r).ok_or_else(bad)?;
        let size = parse_i64(s).ok_or_else(bad)?;
        if size < 1 || rank < 0 || rank >= size {
            return Err(format!("field {k} ({what}): rank {rank} in a communicator of size {size}"));
        }
        Ok(CommArg { handle, rank, size })
    }

    /// Two fields `address:c0,c1,…` → the counts (non-negative).
    pub fn list(&mut self, what: &str, out: &mut Vec<u64>) -> FieldResult<()> {
        self.addr(what)?;
        let (k, f) = self.take(what)?;
        out.clear();
        for c in f.split(|&c| c == b',') {
            match parse_i64(c) {
                Some(v) if v >= 0 => out.push(v as u64),
                _ => return Err(format!("field {k} ({what}): expected comma-separated counts, got {}", show(f))),
            }
        }
        Ok(())
    }

    /// Skip `n` fields whatever they hold.
    pub fn skip(&mut self, n: usize, what: &str) -> FieldResult<()> {
        for _ in 0..n {
            self.take(what)?;
        }
        Ok(())
    }

    pub fn finished(&self) -> bool {
        self.next >= self.spans.len()
    }

    /// All fields consumed?
    pub fn end(&self, name: &str, signature: &str) -> FieldResult<()> {
        if self.next < self.spans.len() {
            return Err(format!("{name} has {} argument fields, expected {} ({signature})", self.spans.len(), self.next));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_exact() {
        assert_eq!(Time::parse(b"1298365588610860"), Some(Time(1_298_365_588_610_860_000_000)));
        assert_eq!(Time::parse(b"1.0"), Some(Time(1_000_000)));
        assert_eq!(Time::parse(b"12.345"), Some(Time(12_345_000)));
        assert_eq!(Time::parse(b"1237759886260335.000000"), Some(Time(1_237_759_886_260_335_000_000)));
        assert_eq!(Time::parse(b"0.0000015"), Some(Time(2)));
        assert_eq!(Time::parse(b"1.5e3"), Some(Time(1_500_000_000)));
        for bad in [&b""[..], b"-", b"1.2.3", b"abc", b".", b"-5"] {
            assert_eq!(Time::parse(bad), None, "{:?}", std::str::from_utf8(bad));
        }
    }

    #[test]
    fn scaling_rounds_like_schedgen() {
        assert_eq!(Time::scaled(1_500_000, 1000.0), 1500); // 1.5 µs → 1500 ns
        assert_eq!(Time::scaled(1_234_567, 1000.0), 1235);
        assert_eq!(Time::scaled(1_000_000, 1.0), 1);
        assert_eq!(Time::scaled(1_000_000, 2.5), 3);
    }

    #[test]
    fn fields() {
        let line = b"1:-4:10,8,8:6575616,0,4:99:3,0,5";
        let spans = [(0, 1), (2, 4), (5, 11), (12, 23), (24, 26), (27, 32)];
        let mut f = Fields::new(line, &spans);
        assert_eq!(f.addr("buf").unwrap(), 1);
        assert_eq!(f.int("dest").unwrap(), -4);
        assert_eq!(f.dtype("type").unwrap(), Dtype { code: 10, size: 8 });
        assert_eq!(f.comm("comm").unwrap(), CommArg { handle: 6575616, rank: 0, size: 4 });
        let mut v = Vec::new();
        f.list("counts", &mut v).unwrap();
        assert_eq!(v, vec![3, 0, 5]);
        assert!(f.end("MPI_X", "...").is_ok());
        let mut g = Fields::new(line, &spans[..2]);
        assert!(g.dtype("type").unwrap_err().contains("field 1 (type): expected a datatype"));
        let bad_comm = Fields::new(b"7,4,4", &[(0, 5)]).comm("comm").unwrap_err();
        assert!(bad_comm.contains("rank 4 in a communicator of size 4"), "{bad_comm}");
    }
}
