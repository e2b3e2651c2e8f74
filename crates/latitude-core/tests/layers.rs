//! The core's modules form layers read bottom to top as the pipeline; a module may use only
//! modules of lower layers (`crate::x` paths, test code included). Read from the sources.

use std::path::Path;

/// Bottom to top.
const LAYERS: &[&[&str]] = &[
    &["text", "model", "units", "parallel"],
    &["error"],
    &["output"],
    &["graph"],
    &["goal", "lgraph", "gen", "collectives", "net"],
    &["trace", "synth"],
    &["schedule"],
    &["engine"],
    &["lp", "sim"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Every `crate::name` in a source text.
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_module_uses_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if first == "lib" {
            continue;
        }
        let me = layer(&first).unwrap_or_else(|| panic!("module {first} is in no layer: add it to LAYERS"));
        for used in crate_paths(&std::fs::read_to_string(f).unwrap()) {
            // lib.rs re-exports these at the root.
            let used = match used.as_str() {
                "Error" | "Result" => "error".to_string(),
                "ExecGraph" | "GraphBuilder" => "graph".to_string(),
                _ => used,
            };
            if used == first {
                continue;
            }
            match layer(&used) {
                Some(l) if l < me => {}
                _ => bad.push(format!("{} uses crate::{used}", rel.display())),
            }
        }
    }
    assert!(bad.is_empty(), "imports that do not point down:\n{}", bad.join("\n"));
}

#[test]
fn the_check_sees_paths() {
    assert_eq!(crate_paths("use crate::graph::X; crate::model::p(); // crate::"), ["graph", "model"]);
}
