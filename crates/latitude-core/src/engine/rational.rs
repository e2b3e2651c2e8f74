//! Exact rationals for parameter values (numerator / denominator in fs) and the lines
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
    pub fn sub(self, o: Rat) -> Rat {
        Rat::new(self.num * o.den - o.num * self.den, self.den * o.den)
    }
}

impl Ord for Rat {
    fn cmp(&self, o: &Rat) -> Ordering {
        (self.num * o.den).cmp(&(o.num * self.den))
    }
}
impl PartialOrd for Rat {
    fn partial_cmp(&self, o: &Rat) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A piece of T: T(x) = s·x + c, x and T in fs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub s: u64,
    pub c: i128,
}

impl Line {
    /// The lines through an evaluation at x: (left piece, right piece). The intercepts are
    /// path constants on the fs grid, so the divisions are exact.
    pub fn at(x: Rat, e: &Eval) -> (Line, Line) {
        // e.t is T in units of fs/x.den (the point was built with Point::at_fs).
        let line = |s: u64| {
            let num = e.t - s as i128 * x.num;
            debug_assert_eq!(num % x.den, 0, "path constants lie on the fs grid");
            Line { s, c: num.div_euclid(x.den) }
        };
        (line(e.left), line(e.right))
    }
    /// Value at x, as a rational (fs).
    pub fn value(&self, x: Rat) -> Rat {
        Rat::new(self.s as i128 * x.num + self.c * x.den, x.den)
    }
    /// Where two lines of different slopes meet.
    pub fn meet(&self, o: &Line) -> Rat {
        Rat::new(self.c - o.c, o.s as i128 - self.s as i128)
    }
}
