//! The measured times of a trace's calls, rank by rank, for showing the traced run itself
//! (a timeline next to a simulated one): every call record's name, start, end and line.
//!
//! Times are ns after the rank's return from MPI_Init, the origin the graph gives every
//! rank (clocks of different nodes are not aligned, so neither are the ranks here), scaled
//! by `timemult` exactly as the schedule scales computation.

use std::collections::HashMap;

use super::fields::Time;
use super::files::TraceSet;
use super::reader::RankReader;
use crate::error::Result;

/// One rank's calls, in file order.
#[derive(Clone, Debug, Default)]
pub struct RankTimes {
    /// Distinct call names; `name` indexes them.
    pub names: Vec<String>,
    pub name: Vec<u32>,
    pub start_ns: Vec<i64>,
    pub end_ns: Vec<i64>,
    /// 1-based line of the call in its file (what the schedule records per vertex when
    /// asked for source lines).
    pub line: Vec<u32>,
}

/// The calls of every rank of `set`.
pub fn call_times(set: &TraceSet, timemult: f64) -> Result<Vec<RankTimes>> {
    set.files.iter().map(|f| rank_times(&f.display().to_string(), timemult)).collect()
}

fn rank_times(path: &str, timemult: f64) -> Result<RankTimes> {
    let mut reader = RankReader::open(path)?;
    let mut out = RankTimes::default();
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut origin: Option<Time> = None;
    while let Some(rec) = reader.next_record()? {
        let (start, end) = (rec.start.or(rec.end), rec.end.or(rec.start));
        let (Some(start), Some(end)) = (start, end) else { continue };
        let o = *origin.get_or_insert(end); // the first call (MPI_Init) ends at time 0
        let id = match ids.get(rec.name()) {
            Some(&id) => id,
            None => {
                let id = out.names.len() as u32;
                out.names.push(rec.name().to_string());
                ids.insert(rec.name().to_string(), id);
                id
            }
        };
        out.name.push(id);
        out.start_ns.push(Time::scaled(start.0 - o.0, timemult) as i64);
        out.end_ns.push(Time::scaled(end.0 - o.0, timemult) as i64);
        out.line.push(u32::try_from(rec.line).unwrap_or(u32::MAX));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_start_at_mpi_init() {
        let dir = std::env::temp_dir().join(format!("latitude-times-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t-0.txt");
        std::fs::write(&p, "MPI_Init:-:1:2:10.000\nMPI_Barrier:12.500:5,0,1:14.000\nMPI_Finalize:20.000:-\n").unwrap();
        let t = rank_times(p.to_str().unwrap(), 1000.0).unwrap();
        assert_eq!(t.names, ["MPI_Init", "MPI_Barrier", "MPI_Finalize"]);
        assert_eq!(t.start_ns, [0, 2500, 10000]);
        assert_eq!(t.end_ns, [0, 4000, 10000]);
        assert_eq!(t.line, [1, 2, 3]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
