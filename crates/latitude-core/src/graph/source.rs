//! Where each vertex came from, for error messages and reports: the file and the line of
//! its statement. Labels are not kept in memory; they are read back from the file when a
//! message needs them (errors and reports touch few vertices).

use std::fs::File;
use std::io::{BufRead, BufReader};

use super::Arr;

#[derive(Clone, Debug)]
pub struct SourceMap {
    pub path: String,
    /// 1-based line of each vertex's statement, indexed like the graph's vertices.
    pub line: Arr<u32>,
}

impl SourceMap {
    pub fn location(&self, v: usize) -> String {
        format!("{}:{}", self.path, self.line[v])
    }

    pub fn describe(&self, v: usize, fallback: &str) -> String {
        let line = self.line[v];
        match self.labels(&[line]).pop().flatten() {
            Some(label) => format!("{} label {} ({}:{})", fallback, label, self.path, line),
            None => format!("{} ({}:{})", fallback, self.path, line),
        }
    }

    /// Labels of the statements on the given lines (one scan of the file).
    pub fn labels(&self, lines: &[u32]) -> Vec<Option<String>> {
        let mut want: Vec<(u32, usize)> = lines.iter().copied().zip(0..).collect();
        want.sort_unstable();
        let mut out = vec![None; lines.len()];
        let Ok(f) = File::open(&self.path) else { return out };
        let mut k = 0;
        for (i, text) in BufReader::new(f).split(b'\n').enumerate() {
            let n = i as u32 + 1;
            while k < want.len() && want[k].0 < n {
                k += 1;
            }
            if k == want.len() {
                break;
            }
            if want[k].0 != n {
                continue;
            }
            let Ok(text) = text else { break };
            let label = label_of(&String::from_utf8_lossy(&text));
            while k < want.len() && want[k].0 == n {
                out[want[k].1] = label.clone();
                k += 1;
            }
        }
        out
    }
}

/// The label of an operation statement (`l7: send ...` -> `l7`), if it has one.
fn label_of(text: &str) -> Option<String> {
    let text = match text.find('{') {
        Some(i) => &text[i + 1..],
        None => text,
    };
    let colon = text.find(':')?;
    let label = text[..colon].trim();
    let ok = label.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then(|| label.to_string())
}

#[cfg(test)]
mod tests {
    use super::label_of;

    #[test]
    fn labels_are_read_from_statements() {
        assert_eq!(label_of("l7: send 8b to 1").as_deref(), Some("l7"));
        assert_eq!(label_of("  rank 0 { a_1 : calc 5").as_deref(), Some("a_1"));
        assert_eq!(label_of("calc 5"), None);
    }
}
