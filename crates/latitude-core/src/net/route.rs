//! What a message between two ranks costs on a machine: its route's latency and per-byte gap
//! as sparse affine forms over the named parameters, and how an abstract LogGPS cost (where
//! `L` and `G` stand for "this pair's latency" and "this pair's gap") becomes concrete.

use crate::model::{p, Affine, Lin, Model, Point, ROUTE_GAP_TERMS, ROUTE_LAT_TERMS, TICKS_PER_NS};

/// c (ticks) + Σ a_i θ_{k_i} with at most `N` terms, indices distinct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Terms<const N: usize> {
    pub c: i128,
    pub n: u8,
    pub k: [u16; N],
    pub a: [u32; N],
}

impl<const N: usize> Default for Terms<N> {
    fn default() -> Self {
        Terms { c: 0, n: 0, k: [0; N], a: [0; N] }
    }
}

impl<const N: usize> Terms<N> {
    /// One parameter with coefficient 1 (built in place: the flat network's route is made
    /// for every message of a pass).
    #[inline]
    pub const fn param(k: usize) -> Self {
        let mut t = Terms { c: 0, n: 1, k: [0; N], a: [0; N] };
        t.k[0] = k as u16;
        t.a[0] = 1;
        t
    }
    /// Add a·θ_k (merging with an existing term of k). Panics past N distinct terms
    /// (machines are checked against the limits when they are built).
    pub fn add(&mut self, k: usize, a: u32) {
        if a == 0 {
            return;
        }
        for i in 0..self.n as usize {
            if self.k[i] as usize == k {
                self.a[i] += a;
                return;
            }
        }
        let i = self.n as usize;
        assert!(i < N, "more than {N} parameters in one route");
        self.k[i] = k as u16;
        self.a[i] = a;
        self.n += 1;
    }
    pub fn terms(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        (0..self.n as usize).map(move |i| (self.k[i] as usize, self.a[i]))
    }
    /// Value at a point, in the point's units.
    pub fn at(&self, pt: &Point) -> i128 {
        self.c * pt.scale() + self.terms().map(|(k, a)| a as i128 * pt.theta[k]).sum::<i128>()
    }
}

pub type LatTerms = Terms<ROUTE_LAT_TERMS>;
pub type GapTerms = Terms<ROUTE_GAP_TERMS>;

/// A message's end-to-end latency and per-byte gap on its route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub lat: LatTerms,
    pub gap: GapTerms,
    /// A protocol class's overhead parameter o_c, paid with every o (`NO_CLASS`: none).
    pub ovh: u16,
}

/// `Route::ovh` of a message without a protocol class.
pub const NO_CLASS: u16 = u16::MAX;

impl Route {
    /// The flat network: latency L, gap G.
    pub fn flat() -> Route {
        Route { lat: LatTerms::param(p::L), gap: GapTerms::param(p::G_BYTE), ovh: NO_CLASS }
    }

    /// The route of a message of `bytes` under `model`: its protocol class (if any) adds
    /// l_c to its latency and o_c to its overheads (model.rs, `Classes`).
    #[inline]
    pub fn with_class(mut self, model: &Model, bytes: u64) -> Route {
        if let Some((o, l)) = model.class_params(bytes) {
            self.lat.add(l, 1);
            self.ovh = o as u16;
        }
        self
    }

    /// o_c at a point (0 without a class), in the point's units.
    #[inline]
    pub fn ovh_at(&self, pt: &Point) -> i128 {
        if self.ovh == NO_CLASS {
            0
        } else {
            pt.theta[self.ovh as usize]
        }
    }

    /// The concrete cost of an abstract one without latency or gap terms (overheads),
    /// which needs no route.
    #[inline]
    pub fn local(a: &Affine) -> Lin {
        debug_assert!(a.a[p::L] == 0 && a.a[p::G_BYTE] == 0);
        let mut out = Lin { c: a.c as i128 * TICKS_PER_NS, ..Lin::ZERO };
        out.push(p::O_MSG as u16, a.a[p::O_MSG]);
        out.push(p::G_MSG as u16, a.a[p::G_MSG]);
        out.push(p::O_BYTE as u16, a.a[p::O_BYTE]);
        out
    }

    /// The concrete cost of an abstract one on this route: o, g, O stay themselves, each
    /// latency term becomes the route's latency form, each byte of G the route's gap.
    #[inline(always)]
    pub fn expand(&self, a: &Affine) -> Lin {
        let (al, ag) = (a.a[p::L], a.a[p::G_BYTE]);
        let mut out = Lin { c: a.c as i128 * TICKS_PER_NS, lat: al, ..Lin::ZERO };
        out.push(p::O_MSG as u16, a.a[p::O_MSG]);
        out.push(p::G_MSG as u16, a.a[p::G_MSG]);
        out.push(p::O_BYTE as u16, a.a[p::O_BYTE]);
        if self.ovh != NO_CLASS {
            out.push(self.ovh, a.a[p::O_MSG]);
        }
        if al != 0 {
            out.c += al as i128 * self.lat.c;
            for i in 0..self.lat.n as usize {
                out.push(self.lat.k[i], al * self.lat.a[i] as u64);
            }
        }
        if ag != 0 {
            out.c += ag as i128 * self.gap.c;
            for i in 0..self.gap.n as usize {
                out.push(self.gap.k[i], ag * self.gap.a[i] as u64);
            }
        }
        out
    }
}

/// Where the forward pass gets a message's route from (a machine, or the LP's per-pair
/// columns).
pub trait Routes: Sync {
    fn route(&self, src: u32, dst: u32) -> Route;
    /// Upper bounds of any route's latency and gap at `pt`, in the point's units (for
    /// overflow checks).
    fn max_route(&self, pt: &Point) -> (f64, f64);
    /// Every pair's latency is L and its gap G.
    fn is_flat(&self) -> bool {
        false
    }
}

/// Every pair of ranks sees L and G: the classic LogGPS network.
pub struct Flat;

impl Routes for Flat {
    #[inline]
    fn route(&self, _: u32, _: u32) -> Route {
        Route::flat()
    }
    fn max_route(&self, pt: &Point) -> (f64, f64) {
        (pt.theta[p::L] as f64, pt.theta[p::G_BYTE] as f64)
    }
    fn is_flat(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cost;

    #[test]
    fn flat_expansion_is_the_abstract_cost() {
        let pt = Point::from_ns(&[1000.0, 100.0, 7.0, 0.5, 0.25]).unwrap();
        for a in [cost::arrival(11), cost::handshake_send(100), cost::nic_gap(9), cost::send_overhead(3)] {
            let lin = Route::flat().expand(&a);
            assert_eq!(lin.eval(&pt), a.eval(&pt));
            assert_eq!(lin.lat, a.a[p::L]);
            for k in 0..5 {
                assert_eq!(lin.coeff(k), a.a[k]);
            }
        }
    }

    #[test]
    fn a_route_replaces_latency_and_gap() {
        // latency 2·wire + switch + 5 ns, gap = θ_6 per byte
        let mut lat = LatTerms::default();
        lat.add(5, 2);
        lat.add(7, 1);
        lat.c = 5 * TICKS_PER_NS;
        let route = Route { lat, gap: GapTerms::param(6), ovh: NO_CLASS };
        let lin = route.expand(&cost::handshake_send(11)); // 2o + 3·lat + 10·gap
        assert_eq!((lin.coeff(5), lin.coeff(7), lin.coeff(6), lin.coeff(p::O_MSG), lin.coeff(p::L)), (6, 3, 10, 2, 0));
        assert_eq!(lin.c, 15 * TICKS_PER_NS);
        assert_eq!(lin.lat, 3);
    }
}
