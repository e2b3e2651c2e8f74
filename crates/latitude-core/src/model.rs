//! The LogGPS cost model (docs/model.md §1): what engine, LP and simulator all mean.
//!
//! Parameters θ = (L, o, g, G, O) in ns (G and O per byte), eager limit S in bytes
//! (a message of s bytes is eager iff s ≤ S), b(s) = s − 1 for s ≥ 1 and 0 for s = 0.
//! For every op v: S(v) = start, E(v) = end. Local edges: `a requires b` ⇒ S(a) ≥ E(b);
//! `a irequires b` ⇒ S(a) ≥ S(b). S(v) is the max over those terms (0 without any).
//!
//! ```text
//! calc c:           E = S + c
//! calc c copying s: E = S + c + b(s)·C                    (a collective's local copy;
//!                   C = the named parameter `C` when the model has one, else O)
//! eager send u:     E(u) = S(u) + o + b(s)·O              arrival a = S(u) + o + L + b(s)·G
//! eager recv v:     E(v) = max(S(v), a) + o + b(s)·O
//! rendezvous (s > S), protocol `handshake` (LLAMP paper, App. B / Fig. 14; default):
//!                   h    = max(S(u) + o + L, S(v))        RTS arrived and recv posted
//!                   E(v) = h + 2o + 2L + b(s)·G           read request, data, recv overhead
//!                   E(u) = h + 2o + 3L + b(s)·G           ... and the FIN back to the sender
//! rendezvous, protocol `loggopsim` (LogGOPSim and LLAMP's current code):
//!                   E(v) = max(S(v), S(u) + o + L + b(s)·G) + o
//!                   E(u) = max(S(u) + o + L, S(v))        sender completes at the match
//! NIC serialization (option, fixed trace order; g is per message, G per byte):
//!                   S(u') ≥ S(u) + g + b(s_u)·G  for consecutive sends u, u' of a rank/NIC
//! T = max over all ops of E(v).
//! protocol classes (option, `Classes`): small s ≤ S₁, medium S₁ < s ≤ S, large s > S;
//!                   a message of class c pays o + o_c for every o and L + l_c for every L
//!                   above (o_c, l_c named parameters of θ), so costs stay affine.
//! copy cost (option, `Model::copy`): the named parameter C, the per-byte cost of a local
//!                   memory copy, prices every calc's copy; without it the copy pays O.
//! call cost (option, `Model::call`): the named parameter K, the MPI library's own cost of
//!                   one collective call on one rank beyond its messages: the calc that ends
//!                   a rank's part of a collective call (its join, graph/colls.rs) lasts
//!                   c + K, so E = S + c + K; without K a join pays nothing more.
//! ```
//! Differences from LogGOPSim (reproduced by the simulator's `--loggopsim-compat`, not here):
//! LogGOPSim charges the receiver's o (and G) when the message *arrives*, even if the recv is
//! posted later, so a late recv completes at its post time; here the recv pays o after
//! max(posted, arrived), as the LLAMP LP (Alg. 1) does. LogGOPSim serializes every op on its
//! CPU/NIC in simulation order and lets dependencies across CPUs carry no time; here only
//! the graph's edges (and optionally the trace-order NIC chain) order ops. LLAMP's code
//! charges s·G and adds 5 µs to each irequires successor; we use (s − 1)·G as the paper and
//! LogGOPSim do, and no fixed irequires overhead.
//!
//! Arithmetic is exact: costs are affine in θ with integer coefficients, and a parameter
//! point is fixed-point (`Point`): times are integers in units of 1/`unit` ns (ticks of
//! 10⁻⁹ ns for user input).

/// Index of each parameter in θ.
pub mod p {
    pub const L: usize = 0;
    /// o: CPU overhead per message.
    pub const O_MSG: usize = 1;
    /// g: NIC gap per message.
    pub const G_MSG: usize = 2;
    /// G: gap per byte (1/bandwidth).
    pub const G_BYTE: usize = 3;
    /// O: CPU overhead per byte.
    pub const O_BYTE: usize = 4;
    pub const NAMES: [&str; super::NPARAM] = ["L", "o", "g", "G", "O"];
}

pub const NPARAM: usize = 5;

/// Rendezvous protocol variant (docs/model.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Handshake,
    LogGopSim,
}

impl Protocol {
    pub fn parse(s: &str) -> Option<Protocol> {
        match s {
            "handshake" => Some(Protocol::Handshake),
            "loggopsim" => Some(Protocol::LogGopSim),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Handshake => "handshake",
            Protocol::LogGopSim => "loggopsim",
        }
    }
}

/// Three protocol size classes (docs/model.md §1): small ("mailbox", s ≤ S₁), medium
/// (eager, S₁ < s ≤ S) and large (rendezvous, s > S). Class c adds its own named parameters
/// to every message of the class: o_c to each overhead term o, l_c to each latency term L
/// (its set-up latency), so a class message pays o + o_c and L + l_c wherever the
/// two-protocol model pays o and L. Costs stay affine in θ with integer coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classes {
    /// S₁: messages of at most this many bytes are small (S₁ < S).
    pub small_limit: u64,
    /// Index in θ of each class's overhead o_c and set-up latency l_c.
    pub o: [u16; 3],
    pub l: [u16; 3],
}

/// The names of the class parameters (`Classes::o`, `Classes::l`), class by class.
pub const CLASS_NAMES: [&str; 3] = ["small", "medium", "large"];
pub const CLASS_O: [&str; 3] = ["small.o", "medium.o", "large.o"];
pub const CLASS_L: [&str; 3] = ["small.L", "medium.L", "large.L"];

/// The name of the copy parameter (`Model::copy`): the per-byte cost of a local memory copy.
pub const COPY_NAME: &str = "C";
/// The name of the call parameter (`Model::call`): the cost of one collective call on a rank.
pub const CALL_NAME: &str = "K";

/// Structural model options (fixed for a plan; parameter values vary per point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Model {
    pub protocol: Protocol,
    /// Eager limit S: messages of at most this many bytes are eager.
    pub eager_limit: u64,
    /// Serialize each rank's sends on their NIC in trace order (g, G).
    pub nic_serialization: bool,
    /// Protocol size classes (None: the two-protocol model, no class parameters).
    pub classes: Option<Classes>,
    /// Index in θ of C, the per-byte cost of a local memory copy (`COPY_NAME`), which
    /// prices every calc's copy. None: the copy pays O, the eager per-byte overhead.
    pub copy: Option<u16>,
    /// Index in θ of K, the cost of one collective call on one rank beyond its messages
    /// (`CALL_NAME`), paid by the calc that ends each rank's part of a call. None: nothing.
    pub call: Option<u16>,
}

impl Default for Model {
    fn default() -> Self {
        Model { protocol: Protocol::Handshake, eager_limit: 256 * 1024, nic_serialization: false, classes: None, copy: None, call: None }
    }
}

impl Model {
    pub fn is_eager(&self, bytes: u64) -> bool {
        bytes <= self.eager_limit
    }
    /// The class (0 small, 1 medium, 2 large) of a message of `bytes`, if the model has classes.
    #[inline]
    pub fn class_of(&self, bytes: u64) -> Option<usize> {
        let c = self.classes?;
        Some(if bytes <= c.small_limit {
            0
        } else if self.is_eager(bytes) {
            1
        } else {
            2
        })
    }
    /// The class parameters (o_c, l_c) of a message of `bytes`, if the model has classes.
    #[inline]
    pub fn class_params(&self, bytes: u64) -> Option<(usize, usize)> {
        let (c, i) = (self.classes?, self.class_of(bytes)?);
        Some((c.o[i] as usize, c.l[i] as usize))
    }
    /// The parameter that prices a byte of a local copy: C when the model has it, else O.
    #[inline]
    pub fn copy_param(&self) -> usize {
        self.copy.map_or(p::O_BYTE, |k| k as usize)
    }
    /// The cost of calc `v`'s own work: c ns, its copy (b(s)·C, else O) and, when it ends a
    /// collective call (`call_end`) and the model has K, one K.
    #[inline]
    pub fn calc_cost(&self, c_ns: u64, copy: u64, call_end: bool) -> Lin {
        let mut l = Lin::calc(c_ns, copy, self.copy_param());
        if let (true, Some(k)) = (call_end, self.call) {
            l.push(k, 1);
        }
        l
    }
}

/// b(s) = s − 1 (0 for empty messages).
#[inline]
pub fn b(s: u64) -> u64 {
    s.saturating_sub(1)
}

/// A cost c + Σ a_k θ_k with c in ns and integer coefficients a_k ≥ 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Affine {
    pub c: u64,
    pub a: [u64; NPARAM],
}

impl Affine {
    pub const ZERO: Affine = Affine { c: 0, a: [0; NPARAM] };

    pub fn constant(c: u64) -> Affine {
        Affine { c, a: [0; NPARAM] }
    }
    pub fn is_zero(&self) -> bool {
        self.c == 0 && self.a.iter().all(|&x| x == 0)
    }
    #[inline]
    pub fn plus(mut self, o: &Affine) -> Affine {
        self.c += o.c;
        for k in 0..NPARAM {
            self.a[k] += o.a[k];
        }
        self
    }
    /// Value at a point, in the point's units.
    #[inline]
    pub fn eval(&self, pt: &Point) -> i128 {
        let mut t = self.c as i128 * pt.unit;
        for k in 0..NPARAM {
            if self.a[k] != 0 {
                t += self.a[k] as i128 * pt.theta[k];
            }
        }
        t
    }
}

fn term(k: usize, n: u64) -> [u64; NPARAM] {
    let mut a = [0; NPARAM];
    a[k] = n;
    a
}

fn sum(parts: &[[u64; NPARAM]]) -> Affine {
    let mut a = [0; NPARAM];
    for p in parts {
        for k in 0..NPARAM {
            a[k] += p[k];
        }
    }
    Affine { c: 0, a }
}

/// The cost rules, one function per formula in the module comment.
pub mod cost {
    use super::*;

    /// Eager send: E(u) − S(u) = o + b(s)·O.
    pub fn send_overhead(s: u64) -> Affine {
        sum(&[term(p::O_MSG, 1), term(p::O_BYTE, b(s))])
    }
    /// Eager recv: E(v) − max(S(v), a) = o + b(s)·O.
    pub fn recv_overhead(s: u64) -> Affine {
        send_overhead(s)
    }
    /// Message arrival after the send starts: o + L + b(s)·G.
    pub fn arrival(s: u64) -> Affine {
        sum(&[term(p::O_MSG, 1), term(p::L, 1), term(p::G_BYTE, b(s))])
    }
    /// Rendezvous request-to-send: S(u) + o + L.
    pub fn rts() -> Affine {
        sum(&[term(p::O_MSG, 1), term(p::L, 1)])
    }
    /// Handshake: E(v) − h = 2o + 2L + b(s)·G.
    pub fn handshake_recv(s: u64) -> Affine {
        sum(&[term(p::O_MSG, 2), term(p::L, 2), term(p::G_BYTE, b(s))])
    }
    /// Handshake: E(u) − h = 2o + 3L + b(s)·G.
    pub fn handshake_send(s: u64) -> Affine {
        sum(&[term(p::O_MSG, 2), term(p::L, 3), term(p::G_BYTE, b(s))])
    }
    /// LogGOPSim rendezvous: E(v) − max(S(v), a) = o.
    pub fn loggopsim_recv() -> Affine {
        sum(&[term(p::O_MSG, 1)])
    }
    /// A local copy of s bytes on the CPU (a collective's own block): b(s) bytes, written in
    /// O's column; `Model::copy_param` says which parameter prices them (C, else O), and
    /// the calc that copies adds them to its own duration (`Lin::calc`).
    pub fn copy(s: u64) -> Affine {
        sum(&[term(p::O_BYTE, b(s))])
    }
    /// The call cost of a calc that ends a collective call: one K, written in o's column
    /// (a calc has no o of its own); the path's call step prices it by K (`Model::call`).
    pub fn call() -> Affine {
        sum(&[term(p::O_MSG, 1)])
    }
    /// NIC occupancy of a send in trace order: g + b(s)·G.
    pub fn nic_gap(s: u64) -> Affine {
        sum(&[term(p::G_MSG, 1), term(p::G_BYTE, b(s))])
    }
}

/// Most named parameters a point holds: the five globals, one latency per link class, the
/// intra-node L and G, and whatever a machine file adds.
pub const MAXP: usize = 32;

/// A parameter point in fixed point: θ_k = theta[k] / unit ns; times come out as integers
/// in units of 1/unit ns. For user input `unit` = 10⁹: values are whole *ticks* of 10⁻⁹ ns
/// (fine enough for a per-byte G of 0.0025 ns to 7 digits); analyses scale the unit to
/// evaluate exactly at rational points. `unit` is always a multiple of 10⁹ (`scale()`).
/// Indices 0..5 are the globals (`p`); a machine's named parameters follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    pub theta: [i128; MAXP],
    /// Number of named parameters in use.
    pub n: usize,
    pub unit: i128,
}

pub const TICKS_PER_NS: i128 = 1_000_000_000;

impl Point {
    /// From values in ns (G, O in ns per byte), rounded to whole ticks (10⁻⁹ ns). `names`
    /// names them in messages (the globals' names when shorter).
    pub fn from_ns(vals: &[f64]) -> Result<Point, String> {
        Point::from_named(vals, &p::NAMES)
    }

    pub fn from_named<S: AsRef<str>>(vals: &[f64], names: &[S]) -> Result<Point, String> {
        if vals.len() > MAXP {
            return Err(format!("at most {MAXP} named parameters are supported, got {}", vals.len()));
        }
        if vals.len() < NPARAM {
            return Err(format!("expected at least the {NPARAM} parameters L, o, g, G, O, got {}", vals.len()));
        }
        let mut theta = [0i128; MAXP];
        for (k, &v) in vals.iter().enumerate() {
            let name = names.get(k).map_or("?", |s| s.as_ref());
            if !v.is_finite() || v < 0.0 {
                return Err(format!("parameter {name} must be a finite non-negative value, got {v}"));
            }
            if v > 1e15 {
                return Err(format!("parameter {name} = {v} ns is out of range"));
            }
            theta[k] = (v * TICKS_PER_NS as f64).round() as i128;
        }
        Ok(Point { theta, n: vals.len(), unit: TICKS_PER_NS })
    }

    /// Parameter values in ns.
    pub fn ns(&self) -> Vec<f64> {
        self.theta[..self.n].iter().map(|&t| t as f64 / self.unit as f64).collect()
    }

    /// unit / 10⁹: what a constant in ticks is multiplied by to be in this point's units.
    #[inline]
    pub fn scale(&self) -> i128 {
        self.unit / TICKS_PER_NS
    }

    /// Same point with parameter k replaced by num/den ns (exact), rescaling the unit.
    pub fn with_rational(&self, k: usize, num: i128, den: i128) -> Point {
        assert!(den > 0 && k < self.n);
        let mut theta = self.theta;
        for t in theta.iter_mut() {
            *t *= den;
        }
        theta[k] = num * self.unit;
        Point { theta, n: self.n, unit: self.unit * den }
    }

    /// Same point (which must be in ticks, `unit` = 10⁹) with parameter k = num/den ticks,
    /// exact: times then come out in units of ticks/den.
    pub fn at_ticks(&self, k: usize, num: i128, den: i128) -> Point {
        assert!(den > 0 && self.unit == TICKS_PER_NS && k < self.n);
        let mut theta = self.theta;
        for t in theta.iter_mut() {
            *t *= den;
        }
        theta[k] = num;
        Point { theta, n: self.n, unit: TICKS_PER_NS * den }
    }

    pub fn to_ns(&self, t: i128) -> f64 {
        ratio_f64(t, self.unit)
    }
}

/// num/den as a float, the same float for the same rational whatever unit it is counted in
/// (engine ticks, the simulator's fs, a scaled sweep unit): the whole part q and the
/// fraction r/den are converted separately (q's rounding error is added back before the
/// last rounding), so a time past 2⁵³ units is not rounded to f64 and then again by the
/// division. That double rounding made equal runtimes of the engine and the simulator print
/// differently in the last digit.
#[inline]
pub fn ratio_f64(num: i128, den: i128) -> f64 {
    debug_assert!(den > 0);
    let (q, r) = (num.div_euclid(den), num.rem_euclid(den));
    let whole = q as f64;
    let err = (q - whole as i128) as f64; // exact: |err| ≤ half an ulp of q
    whole + (err + r as f64 / den as f64)
}

/// Most terms of a concrete cost: o, g, O, a class's o_c plus a route's latency (with a
/// class's l_c) and gap terms.
pub const LIN_TERMS: usize = 4 + ROUTE_LAT_TERMS + ROUTE_GAP_TERMS;
/// Most named parameters in one route's latency (link classes + L, and a protocol class's
/// set-up latency) and gap.
pub const ROUTE_LAT_TERMS: usize = 9;
pub const ROUTE_GAP_TERMS: usize = 2;

/// A concrete cost over the named parameters: c (ticks) + Σ a_i θ_{k_i}, the terms sparse.
/// It is what an abstract [`Affine`] becomes once a message's route is known
/// (`net::Route::expand`). `lat` counts the abstract latency terms (how many times the
/// message's end-to-end latency is paid), whatever parameters make that latency up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lin {
    pub c: i128,
    pub n: u8,
    pub lat: u64,
    pub k: [u16; LIN_TERMS],
    pub a: [u64; LIN_TERMS],
}

impl Lin {
    pub const ZERO: Lin = Lin { c: 0, n: 0, lat: 0, k: [0; LIN_TERMS], a: [0; LIN_TERMS] };

    /// c ns of computation.
    #[inline]
    pub fn constant(c_ns: u64) -> Lin {
        Lin { c: c_ns as i128 * TICKS_PER_NS, ..Lin::ZERO }
    }
    /// A calc: c ns of computation plus a local copy of s bytes, c + b(s)·θ_k with k the
    /// model's copy parameter (`Model::copy_param`: C, else O; `cost::copy`).
    #[inline]
    pub fn calc(c_ns: u64, copy: u64, k: usize) -> Lin {
        let mut l = Lin::constant(c_ns);
        l.push(k as u16, b(copy));
        l
    }
    #[inline]
    pub fn terms(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        (0..self.n as usize).map(move |i| (self.k[i] as usize, self.a[i]))
    }
    /// Append a term (callers keep indices distinct; see `net::Route::expand`).
    #[inline]
    pub fn push(&mut self, k: u16, a: u64) {
        if a != 0 {
            let i = self.n as usize;
            self.k[i] = k;
            self.a[i] = a;
            self.n += 1;
        }
    }
    /// Coefficient of parameter k.
    #[inline]
    pub fn coeff(&self, k: usize) -> u64 {
        self.terms().filter(|&(j, _)| j == k).map(|(_, a)| a).sum()
    }
    /// Value at a point, in the point's units.
    #[inline]
    pub fn eval(&self, pt: &Point) -> i128 {
        let mut t = self.c * pt.scale();
        for i in 0..self.n as usize {
            t += self.a[i] as i128 * pt.theta[self.k[i] as usize];
        }
        t
    }
    /// self + o, merging terms of the same parameter; None if the terms do not fit.
    pub fn plus(&self, o: &Lin) -> Option<Lin> {
        let mut out = *self;
        out.c += o.c;
        out.lat += o.lat;
        'terms: for (k, a) in o.terms() {
            for i in 0..out.n as usize {
                if out.k[i] as usize == k {
                    out.a[i] += a;
                    continue 'terms;
                }
            }
            if out.n as usize == LIN_TERMS {
                return None;
            }
            out.push(k as u16, a);
        }
        Some(out)
    }
    /// Dense coefficients (length `n`).
    pub fn dense(&self, n: usize) -> Vec<u64> {
        let mut out = vec![0; n];
        for (k, a) in self.terms() {
            out[k] += a;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_match_the_formulas() {
        let pt = Point::from_ns(&[1000.0, 100.0, 0.0, 0.5, 0.0]).unwrap();
        // 11-byte message: o + L + 10·G = 100 + 1000 + 5 ns
        assert_eq!(pt.to_ns(cost::arrival(11).eval(&pt)), 1105.0);
        assert_eq!(pt.to_ns(cost::handshake_send(11).eval(&pt)), 200.0 + 3000.0 + 5.0);
        assert_eq!(pt.to_ns(cost::handshake_recv(0).eval(&pt)), 200.0 + 2000.0);
        assert_eq!(b(0), 0);
    }

    #[test]
    fn a_time_converts_to_one_float_whatever_its_unit() {
        // 9 795 076 887.357932 ns: past 2⁵³ ticks, where t as f64 / unit rounds twice
        let fs: i128 = 9_795_076_887_357_932;
        let ticks = fs * 1000;
        assert_eq!(ratio_f64(ticks, TICKS_PER_NS), ratio_f64(fs, 1_000_000));
        assert_eq!(ratio_f64(ticks * 7, TICKS_PER_NS * 7), ratio_f64(fs, 1_000_000));
        assert_eq!(ratio_f64(-3, 2), -1.5);
        assert_eq!(ratio_f64(5, 1), 5.0);
    }

    #[test]
    fn a_copy_is_priced_by_c_when_the_model_has_it() {
        // θ = (L, o, g, G, O, C): a calc of 7 ns copying 1001 bytes
        let pt = Point::from_named(&[0.0, 0.0, 0.0, 0.0, 0.25, 0.5], &["L", "o", "g", "G", "O", "C"]).unwrap();
        let with_c = Model { copy: Some(5), ..Model::default() };
        assert_eq!((with_c.copy_param(), Model::default().copy_param()), (5, p::O_BYTE));
        let c = Lin::calc(7, 1001, with_c.copy_param());
        assert_eq!((pt.to_ns(c.eval(&pt)), c.coeff(5), c.coeff(p::O_BYTE)), (7.0 + 500.0, 1000, 0));
        let o = Lin::calc(7, 1001, Model::default().copy_param());
        assert_eq!((pt.to_ns(o.eval(&pt)), o.coeff(5), o.coeff(p::O_BYTE)), (7.0 + 250.0, 0, 1000));
        assert_eq!(Lin::calc(7, 0, 5), Lin::constant(7), "no copy, no term");
    }

    #[test]
    fn rational_points_are_exact() {
        let pt = Point::from_ns(&[0.0, 0.0, 0.0, 0.018, 0.0]).unwrap();
        let q = pt.with_rational(p::L, 1, 3); // L = 1/3 ns
        let a = Affine { c: 2, a: [3, 0, 0, 0, 0] };
        assert_eq!(a.eval(&q), 3 * q.unit); // 2 + 3·(1/3) = 3 ns exactly
    }
}
