//! Output files are written atomically: into a temporary file in the target's directory,
//! renamed over the target when complete. A reader (or a mapping of the old file) never
//! sees a partial file, and a failed write leaves what was there before.

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};

/// Write `path` through `body` atomically.
pub fn atomic_write(path: &str, body: impl FnOnce(&mut File) -> std::io::Result<()>) -> Result<()> {
    let target = Path::new(path);
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    // The file keeps the mode it had (a replaced output is not made more readable).
    let mode = std::fs::metadata(target).ok().filter(|m| m.is_file()).map(|m| m.permissions());
    let res = File::create(&tmp)
        .and_then(|mut f| {
            if let Some(mode) = mode {
                f.set_permissions(mode)?;
            }
            body(&mut f)
        })
        .and_then(|_| std::fs::rename(&tmp, target));
    res.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, &e)
    })
}
