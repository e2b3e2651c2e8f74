//! The typed MPI calls a trace record becomes (what the schedule consumes): point-to-point
//! arguments, send modes, completions, collectives. calls.rs parses them from the
//! liballprof fields; names.rs says which name is which kind.

pub use super::coll_layouts::CollCall;
use super::fields::CommArg;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    Standard,
    Sync,
    Buffered,
    Ready,
}

/// One side of a point-to-point operation.
#[derive(Clone, Copy, Debug, Default)]
pub struct P2p {
    pub bytes: u64,
    /// Destination or source, as a rank of `comm` (constants such as ANY_SOURCE as traced).
    pub peer: i64,
    pub tag: i64,
    pub comm: CommArg,
}

/// What a call line means to the converter.
#[derive(Clone, Copy, Debug, Default)]
pub enum Call {
    Init,
    Finalize,
    Send {
        mode: SendMode,
        p: P2p,
    },
    Recv {
        p: P2p,
    },
    Isend {
        mode: SendMode,
        p: P2p,
        req: u64,
    },
    Irecv {
        p: P2p,
        req: u64,
    },
    SendInit {
        mode: SendMode,
        p: P2p,
        req: u64,
    },
    RecvInit {
        p: P2p,
        req: u64,
    },
    Start {
        req: u64,
    },
    Startall {
        count: u64,
        reqs: u64,
    },
    RequestFree {
        req: u64,
    },
    Cancel {
        req: u64,
    },
    /// Wait/Test families: `count` requests at `reqs` (`count` = 1 for Wait/Test).
    Complete {
        what: Completion,
        count: u64,
        reqs: u64,
    },
    Probe {
        peer: i64,
        tag: i64,
        comm: CommArg,
    },
    Sendrecv {
        send: P2p,
        recv: P2p,
    },
    Coll(CollCall),
    /// Creates a communicator (a `#@ comm` line follows in our traces).
    CommCreate,
    /// Local bookkeeping (rank/size queries, datatypes, timers, …): its time is computation.
    Local,
    /// A poll that completes nothing (MPI_Iprobe, MPI_Request_get_status): its time is MPI
    /// time (waiting the model re-creates), not computation.
    Poll,
    /// Known but not modelled (RMA, Abort, neighbourhood collectives, …).
    NotModelled,
    /// MPI-IO: file time is the rank's own (kept as computation); reported.
    Io,
    /// Not an MPI function Latitude knows.
    #[default]
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    Wait,
    Waitall,
    Waitany,
    Waitsome,
    Test,
    Testall,
    Testany,
    Testsome,
}

impl Completion {
    pub fn is_test(self) -> bool {
        matches!(self, Completion::Test | Completion::Testall | Completion::Testany | Completion::Testsome)
    }
}
