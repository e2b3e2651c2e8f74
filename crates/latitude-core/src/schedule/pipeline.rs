//! Reading and converting overlap: a reader thread parses the rank files into batches of
//! records (recycled, so their buffers are reused) while the caller converts them. Parsing
//! is about half of the work, so two cores nearly double the throughput.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender};

use crate::error::Error;
use crate::trace::{Header, RankReader, Record};

/// Records per batch.
pub const BATCH: usize = 512;

pub enum Msg {
    /// A rank's file was opened; its header.
    Start {
        rank: u32,
        path: String,
        header: Header,
    },
    /// The first `n` records of the batch are valid; `bytes` read so far in this file.
    Batch {
        records: Vec<Record>,
        n: usize,
        bytes: u64,
    },
    /// End of the rank's file (the header now holds the `#@ end` trailer).
    End {
        header: Header,
        truncated: bool,
        bytes: u64,
    },
    Failed(Error),
}

/// Read every file in rank order, sending batches; stops when the receiver hangs up.
pub fn read_all(files: &[PathBuf], tx: SyncSender<Msg>, recycle: Receiver<Vec<Record>>) {
    for (r, f) in files.iter().enumerate() {
        let path = f.display().to_string();
        let mut rd = match RankReader::open(&path) {
            Ok(rd) => rd,
            Err(e) => {
                let _ = tx.send(Msg::Failed(e));
                return;
            }
        };
        if tx.send(Msg::Start { rank: r as u32, path, header: rd.header.clone() }).is_err() {
            return;
        }
        loop {
            let mut records = recycle.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
            let mut n = 0;
            let mut done = false;
            while n < BATCH {
                if n == records.len() {
                    records.push(Record::default());
                }
                match rd.next_into(&mut records[n]) {
                    Ok(true) => n += 1,
                    Ok(false) => {
                        done = true;
                        break;
                    }
                    Err(e) => {
                        let _ = tx.send(Msg::Failed(e));
                        return;
                    }
                }
            }
            if n > 0 && tx.send(Msg::Batch { records, n, bytes: rd.bytes }).is_err() {
                return;
            }
            if done {
                break;
            }
        }
        if tx.send(Msg::End { header: rd.header.clone(), truncated: rd.truncated, bytes: rd.bytes }).is_err() {
            return;
        }
    }
}
