//! Communicators: which world ranks a call's communicator contains, so that sub-communicator
//! ranks become world ranks and every communicator gets its own matching space.
//!
//! Our traces describe every communicator with a `#@ comm HANDLE seq=K world=…` line; its
//! identity across ranks is (members, remote group, seq) — the handle value differs between
//! processes. Plain liballprof traces record only `handle,rank,size`: a communicator of the
//! world's size is taken as MPI_COMM_WORLD (all such communicators share its matching space,
//! since handles cannot be compared across processes), and a smaller one cannot be mapped
//! (its calls are reported as not modelled).

use std::sync::Arc;

use crate::trace::{CommArg, CommDef};
use rustc_hash::FxHashMap as FxMap;

/// A communicator as the converter uses it: a small copyable handle into the [`Registry`]
/// (no reference counting on the per-call path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comm {
    /// Dense id (0 = MPI_COMM_WORLD and everything taken for it).
    pub id: u32,
    pub size: u32,
    /// An intercommunicator: point-to-point peers are ranks of its remote group.
    pub inter: bool,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    members: Arc<[u32]>,
    remote: Option<Arc<[u32]>>,
    seq: u64,
}

/// Communicators known to the whole conversion (shared by all ranks).
pub struct Registry {
    ids: FxMap<Key, u32>,
    /// World rank of each member, by rank in the communicator.
    members: Vec<Arc<[u32]>>,
    remote: Vec<Option<Arc<[u32]>>>,
    names: Vec<String>,
}

impl Registry {
    pub fn new(world: u32) -> Registry {
        let members: Arc<[u32]> = (0..world).collect();
        let key = Key { members: members.clone(), remote: None, seq: 0 };
        let mut ids = FxMap::default();
        ids.insert(key, 0);
        Registry { ids, members: vec![members], remote: vec![None], names: vec!["MPI_COMM_WORLD".into()] }
    }

    pub fn world(&self) -> Comm {
        Comm { id: 0, size: self.members[0].len() as u32, inter: false }
    }

    /// World ranks of the members of `c`, by rank in it.
    pub fn members(&self, c: Comm) -> &[u32] {
        &self.members[c.id as usize]
    }

    /// World ranks of the group point-to-point peers name (the remote group of an
    /// intercommunicator).
    pub fn peers(&self, c: Comm) -> &[u32] {
        self.remote[c.id as usize].as_deref().unwrap_or(&self.members[c.id as usize])
    }

    /// The communicator a `#@ comm` line describes (None: a member is outside the world).
    pub fn register(&mut self, def: &CommDef, world_size: u32) -> Result<Option<Comm>, String> {
        let Some(members) = &def.world else { return Ok(None) };
        if def.intercomm && def.remote.is_none() {
            return Ok(None);
        }
        for &m in members.iter().chain(def.remote.iter().flatten()) {
            if m >= world_size {
                return Err(format!("'#@ comm {}': member {m} outside a world of {world_size} ranks", def.handle));
            }
        }
        let key = Key { members: members.as_slice().into(), remote: def.remote.as_ref().map(|r| r.as_slice().into()), seq: def.seq };
        let comm = |id: u32| Comm { id, size: members.len() as u32, inter: def.remote.is_some() };
        if let Some(&id) = self.ids.get(&key) {
            return Ok(Some(comm(id)));
        }
        let id = self.members.len() as u32;
        self.names.push(format!("the communicator of ranks {} (seq {})", show_ranks(&key.members), def.seq));
        self.members.push(key.members.clone());
        self.remote.push(key.remote.clone());
        self.ids.insert(key, id);
        Ok(Some(comm(id)))
    }

    pub fn name(&self, id: u32) -> String {
        self.names.get(id as usize).cloned().unwrap_or_else(|| format!("communicator #{id}"))
    }
}

/// `0-3,7` style.
pub fn show_ranks(r: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < r.len() {
        let mut j = i;
        while j + 1 < r.len() && r[j + 1] == r[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if j > i {
            out.push_str(&format!("{}-{}", r[i], r[j]));
        } else {
            out.push_str(&r[i].to_string());
        }
        if out.len() > 60 {
            out.push_str(",…");
            break;
        }
        i = j + 1;
    }
    out
}

/// Why a call's communicator cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unusable {
    /// Plain trace, communicator smaller than the world: members unknown.
    NoMembers,
    /// Contains processes outside MPI_COMM_WORLD (spawned, connected).
    OutsideWorld,
}

/// One rank's handle → communicator table, with this rank's position in each.
#[derive(Default)]
pub struct Handles {
    /// None: a communicator with processes outside MPI_COMM_WORLD.
    map: FxMap<u64, Option<(Comm, Option<u32>)>>,
}

impl Handles {
    /// Record `handle` (of world rank `me`) as `comm`.
    pub fn define(&mut self, handle: u64, comm: Option<Comm>, me: u32, reg: &Registry) {
        let entry = comm.map(|c| {
            let pos = reg.members(c).iter().position(|&m| m == me).map(|p| p as u32);
            (c, pos)
        });
        self.map.insert(handle, entry);
    }

    /// The communicator of a call argument on world rank `me` of a world of `world` ranks,
    /// with this rank's rank in it. `note` is set when a plain trace's recorded rank is
    /// overridden.
    pub fn resolve(&self, reg: &Registry, c: &CommArg, me: u32, world: u32) -> Result<std::result::Result<Resolved, Unusable>, String> {
        if let Some(known) = self.map.get(&c.handle) {
            let Some((comm, pos)) = known else { return Ok(Err(Unusable::OutsideWorld)) };
            let size = comm.size as i64;
            if size != c.size || *pos != Some(c.rank as u32) {
                return Err(format!(
                    "communicator {}: the call says rank {} of {} but its '#@ comm' line makes this rank {} of {}",
                    c.handle,
                    c.rank,
                    c.size,
                    pos.map_or("no member".to_string(), |p| p.to_string()),
                    size
                ));
            }
            return Ok(Ok(Resolved { comm: *comm, me: c.rank as u32, note: None }));
        }
        if c.size == world as i64 {
            // Schedgen's rule: a world-sized communicator is MPI_COMM_WORLD and this file's
            // rank is the rank in it (hand-made samples record rank 0 everywhere).
            let note = (c.rank != me as i64).then(|| {
                format!("communicator {} spans the world but records ranks that differ from the file's rank (e.g. rank {} in rank {me}'s file): taken as MPI_COMM_WORLD with the file's rank, as Schedgen does", c.handle, c.rank)
            });
            return Ok(Ok(Resolved { comm: reg.world(), me, note }));
        }
        Ok(Err(Unusable::NoMembers))
    }
}

/// A call's communicator and this rank's rank in it.
pub struct Resolved {
    pub comm: Comm,
    pub me: u32,
    pub note: Option<String>,
}
