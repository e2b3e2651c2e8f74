//! The integer widths a prediction pass computes in.
//!
//! Exact times need i128 in general (`Plan::check` refuses points that could overflow it),
//! but on realistic graphs every time fits in i64 and every slope in u32. The `Narrow` pass
//! computes in those widths and notes any overflow; a pass that overflowed is run again in
//! `Wide` (i128 and u64, which cannot overflow after `Plan::check`). A narrow pass without
//! overflow did every addition, multiplication and comparison exactly, so its results are
//! those of the wide pass bit for bit — at half the bytes per value (40 instead of 80 on a
//! flat machine) and with 64-bit instead of 128-bit arithmetic. The crude path bounds of
//! `Plan` cannot decide this in advance on large graphs (they sum every calc of every
//! rank), so the narrow pass checks as it goes: one overflow flag per add.
//!
//! Narrow times count units of d ticks, d the greatest common divisor of the parameter values
//! and of one ns (10⁹ ticks, times the point's scale): every time is a sum of multiples of
//! those, so dividing by d is exact and order-preserving, and T is t·d. With parameters in
//! whole ns, d is one ns and i64 holds 292 years (in plain ticks it would hold 9.2 s); a
//! constant that is not a whole ns (a network route's own term) counts as an overflow.

use std::fmt::Debug;

use crate::model::{Lin, Point, MAXP, TICKS_PER_NS};

/// Arithmetic of one width: times `T`, slopes and latency counts `S`.
pub(crate) trait Width: Copy + Debug + 'static {
    type T: Copy + Ord + Debug + Default;
    type S: Copy + Ord + Debug + Default;
    /// The point's parameter values and scale in this width (None: they do not fit).
    fn point(pt: &Point) -> Option<Scaled<Self::T>>;
    /// t += a (constant and parameter terms), slopes += a's coefficients, lat += a.lat;
    /// `over` is set if a result did not fit.
    fn add(t: &mut Self::T, slopes: &mut [Self::S], lat: &mut Self::S, a: &Lin, pt: &Scaled<Self::T>, over: &mut bool);
    /// A time in ticks of the point's unit.
    fn time(t: Self::T, pt: &Scaled<Self::T>) -> i128;
    fn slope(s: Self::S) -> u64;
}

/// A point's values in one width, in units of `unit` ticks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scaled<T> {
    pub theta: [T; MAXP],
    /// The point's scale (wide: a constant's ticks are multiplied by it); narrow: the
    /// units in one ns (a constant's whole ns are multiplied by it).
    pub scale: T,
    pub unit: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

/// i64 times and u32 slopes, overflow checked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Narrow;

/// i128 times and u64 slopes (bounded by `Plan::check`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wide;

impl Width for Narrow {
    type T = i64;
    type S = u32;
    fn point(pt: &Point) -> Option<Scaled<i64>> {
        let ns = TICKS_PER_NS.checked_mul(pt.scale()).filter(|&ns| ns > 0)?;
        let unit = pt.theta.iter().fold(ns, |d, &x| gcd(d, x));
        let mut theta = [0i64; MAXP];
        for (t, &x) in theta.iter_mut().zip(&pt.theta) {
            *t = i64::try_from(x / unit).ok()?;
        }
        Some(Scaled { theta, scale: i64::try_from(ns / unit).ok()?, unit })
    }
    #[inline(always)]
    fn add(t: &mut i64, slopes: &mut [u32], lat: &mut u32, a: &Lin, pt: &Scaled<i64>, over: &mut bool) {
        // Whole ns of the constant (a calc over 9.2 s takes the 128-bit division).
        let whole_ns = match i64::try_from(a.c) {
            Ok(c) => (c % TICKS_PER_NS as i64 == 0).then_some(c / TICKS_PER_NS as i64),
            Err(_) => (a.c % TICKS_PER_NS == 0).then(|| i64::try_from(a.c / TICKS_PER_NS).ok()).flatten(),
        };
        let c = whole_ns.and_then(|c| c.checked_mul(pt.scale));
        let mut x = c.and_then(|c| t.checked_add(c));
        for i in 0..a.n as usize {
            let (k, ak) = (a.k[i] as usize, a.a[i]);
            x = x.and_then(|x| x.checked_add(i64::try_from(ak).ok()?.checked_mul(pt.theta[k])?));
            match u32::try_from(ak).ok().and_then(|ak| slopes[k].checked_add(ak)) {
                Some(s) => slopes[k] = s,
                None => *over = true,
            }
        }
        match x {
            Some(x) => *t = x,
            None => *over = true,
        }
        match u32::try_from(a.lat).ok().and_then(|l| lat.checked_add(l)) {
            Some(l) => *lat = l,
            None => *over = true,
        }
    }
    fn time(t: i64, pt: &Scaled<i64>) -> i128 {
        t as i128 * pt.unit
    }
    fn slope(s: u32) -> u64 {
        s as u64
    }
}

impl Width for Wide {
    type T = i128;
    type S = u64;
    fn point(pt: &Point) -> Option<Scaled<i128>> {
        Some(Scaled { theta: pt.theta, scale: pt.scale(), unit: 1 })
    }
    #[inline(always)]
    fn add(t: &mut i128, slopes: &mut [u64], lat: &mut u64, a: &Lin, pt: &Scaled<i128>, _over: &mut bool) {
        *t += a.c * pt.scale;
        for i in 0..a.n as usize {
            let (k, ak) = (a.k[i] as usize, a.a[i]);
            *t += ak as i128 * pt.theta[k];
            slopes[k] += ak;
        }
        *lat += a.lat;
    }
    fn time(t: i128, _pt: &Scaled<i128>) -> i128 {
        t
    }
    fn slope(s: u64) -> u64 {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_flags_every_overflow_and_is_exact_otherwise() {
        let pt = Point::from_ns(&[3000.0, 1500.0, 6.0, 0.0, 0.0]).unwrap();
        let (n, w) = (Narrow::point(&pt).unwrap(), Wide::point(&pt).unwrap());
        let mut a = Lin::constant(100);
        a.push(0, 4);
        a.push(2, 65536);
        a.lat = 4;
        let (mut tn, mut sn, mut ln, mut over) = (0i64, [0u32; 5], 0u32, false);
        let (mut tw, mut sw, mut lw) = (0i128, [0u64; 5], 0u64);
        for _ in 0..1000 {
            Narrow::add(&mut tn, &mut sn, &mut ln, &a, &n, &mut over);
            Wide::add(&mut tw, &mut sw, &mut lw, &a, &w, &mut over);
        }
        assert!(!over);
        assert_eq!((Narrow::time(tn, &n), ln as u64), (tw, lw));
        assert_eq!(n.unit, 1_000_000_000, "whole-ns parameters: the unit is one ns");
        assert_eq!(sn.map(|s| s as u64), sw);
        // A calc of 20 s (past i64 ticks) is 2·10¹⁰ units of one ns.
        let (t0, mut ok) = (tn, false);
        Narrow::add(&mut tn, &mut sn, &mut ln, &Lin::constant(20_000_000_000), &n, &mut ok);
        assert!(!ok && tn - t0 == 20_000_000_000);
        // A time past i64 units, a constant that is not a whole ns, a slope past u32, a
        // coefficient past u32: each is noticed.
        let mut big = Lin::constant(u64::MAX / 2);
        Narrow::add(&mut tn, &mut sn, &mut ln, &big, &n, &mut over);
        assert!(over);
        over = false;
        big = Lin { c: 1, ..Lin::ZERO };
        Narrow::add(&mut tn, &mut sn, &mut ln, &big, &n, &mut over);
        assert!(over);
        over = false;
        big = Lin::ZERO;
        big.push(2, u32::MAX as u64);
        Narrow::add(&mut tn, &mut sn, &mut ln, &big, &n, &mut over);
        assert!(over);
        over = false;
        big = Lin::ZERO;
        big.push(1, 1 << 33);
        Narrow::add(&mut tn, &mut sn, &mut ln, &big, &n, &mut over);
        assert!(over);
    }
}
