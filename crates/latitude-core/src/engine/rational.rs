//! Exact rationals for parameter values (numerator / denominator in ticks) and the lines
//! T(x) = s·x + c that pieces of a convex piecewise-linear runtime follow.

use std::cmp::Ordering;

use super::multi::Eval;

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// num / den with den > 0, reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rat {
    pub num: i128,
    pub den: i128,
}

impl Rat {
    pub fn new(num: i128, den: i128) -> Rat {
        assert!(den != 0, "zero denominator");
        let g = gcd(num, den).max(1);
        let s = if den < 0 { -1 } else { 1 };
        Rat { num: s * num / g, den: s * den / g }
    }
    pub fn int(x: i128) -> Rat {
        Rat { num: x, den: 1 }
    }
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
    /// self + k (k an integer), without cross-multiplying denominators.
    pub fn plus_int(self, k: i128) -> Rat {
        Rat::new(self.num + k * self.den, self.den)
    }
}

/// Compare a/b with c/d (b, d > 0) without forming a·d or c·b, which can overflow i128 for
/// the denominators of G sweeps: compare integer parts, then the inverted remainders
/// (a continued-fraction walk, Euclid's number of steps).
pub(crate) fn cmp_frac(mut a: i128, mut b: i128, mut c: i128, mut d: i128) -> Ordering {
    let mut flip = false;
    loop {
        let (qa, ra) = (a.div_euclid(b), a.rem_euclid(b));
        let (qc, rc) = (c.div_euclid(d), c.rem_euclid(d));
        if qa != qc {
            let o = qa.cmp(&qc);
            return if flip { o.reverse() } else { o };
        }
        let o = match (ra == 0, rc == 0) {
            (true, true) => return Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => {
                // ra/b < rc/d  ⇔  b/ra > d/rc
                (a, b, c, d) = (b, ra, d, rc);
                flip = !flip;
                continue;
            }
        };
        return if flip { o.reverse() } else { o };
    }
}

impl Ord for Rat {
    fn cmp(&self, o: &Rat) -> Ordering {
        cmp_frac(self.num, self.den, o.num, o.den)
    }
}
impl PartialOrd for Rat {
    fn partial_cmp(&self, o: &Rat) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A piece of T: T(x) = s·x + c, x and T in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub s: u64,
    pub c: i128,
}

impl Line {
    /// The lines through an evaluation at x: (left piece, right piece). The intercepts are
    /// path constants on the tick grid, so the divisions are exact.
    pub fn at(x: Rat, e: &Eval) -> (Line, Line) {
        // e.t is T in units of ticks/x.den (the point was built with Point::at_ticks).
        let line = |s: u64| {
            let num = e.t - s as i128 * x.num;
            debug_assert_eq!(num % x.den, 0, "path constants lie on the tick grid");
            Line { s, c: num.div_euclid(x.den) }
        };
        (line(e.left), line(e.right))
    }
    /// Value at x, as a rational (ticks).
    pub fn value(&self, x: Rat) -> Rat {
        Rat::new(self.s as i128 * x.num + self.c * x.den, x.den)
    }
    /// Where two lines of different slopes meet.
    pub fn meet(&self, o: &Line) -> Rat {
        Rat::new(self.c - o.c, o.s as i128 - self.s as i128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_matches_cross_multiplication_and_does_not_overflow() {
        let mut r = crate::gen::Rng::new(3);
        for _ in 0..20000 {
            let a = Rat::new(r.below(2000) as i128 - 1000, 1 + r.below(50) as i128);
            let b = Rat::new(r.below(2000) as i128 - 1000, 1 + r.below(50) as i128);
            assert_eq!(a.cmp(&b), (a.num * b.den).cmp(&(b.num * a.den)), "{a:?} {b:?}");
        }
        let big = Rat::new(i128::MAX / 3, 1_000_000_000_000_007);
        let close = Rat::new(i128::MAX / 3 - 1, 1_000_000_000_000_007);
        assert_eq!(big.cmp(&close), Ordering::Greater);
        assert_eq!(close.cmp(&big), Ordering::Less);
        assert_eq!(big.cmp(&big), Ordering::Equal);
    }
}
