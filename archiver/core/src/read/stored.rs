//! A source's bytes as stored (compressed, if they are): a file opened as `SourceFile.open` opens it, or
//! bytes given in memory.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes given in memory, shared by the reader and the record that may hold them whole.
#[derive(Clone, Debug)]
pub struct Shared(pub Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Where the bytes as stored are.
#[derive(Clone, Debug)]
pub enum Stored {
    File(PathBuf),
    Memory(Shared),
}

impl Stored {
    /// The bytes as stored, whole; empty if they cannot be read.
    pub fn whole(&self) -> Vec<u8> {
        match self {
            Stored::Memory(data) => data.0.to_vec(),
            Stored::File(path) => open_regular(path)
                .and_then(|(mut file, _)| {
                    let mut raw = Vec::new();
                    file.read_to_end(&mut raw)
                        .map(|_| raw)
                        .map_err(|error| error.to_string())
                })
                .unwrap_or_default(),
        }
    }
}

/// A file opened without blocking on a FIFO, and refused unless regular (`SourceFile.open`), with the
/// buffer size Python's `open` gives it (its `st_blksize`): the most its first read sees. The file
/// keeps O_NONBLOCK, which Python clears: reads of a regular file never block, so nothing differs.
pub fn open_regular(path: &Path) -> Result<(File, usize), String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|error| strerror(&error))?;
    let metadata = file.metadata().map_err(|error| strerror(&error))?;
    let kind = metadata.file_type();
    if !kind.is_file() {
        return Err(format!("not a regular file ({})", file_type(&kind)));
    }
    let block = metadata.blksize();
    let buffer = if block > 1 { block as usize } else { 8192 };
    Ok((file, buffer))
}

/// Why a file cannot be read, as `OSError.strerror` says it.
pub fn cannot_read(reason: &str) -> String {
    format!("cannot read the file: {reason}")
}

fn file_type(kind: &std::fs::FileType) -> &'static str {
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// The C library's text for an OS error (what Python's `strerror` holds), without Rust's "(os error N)".
fn strerror(error: &io::Error) -> String {
    let text = error.to_string();
    match (error.raw_os_error(), text.rfind(" (os error ")) {
        (Some(_), Some(at)) => text[..at].to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_and_directories_are_named() {
        let missing = open_regular(Path::new("/nonexistent/x.jsonl")).unwrap_err();
        assert_eq!(missing, "No such file or directory");
        let directory = open_regular(Path::new("/")).unwrap_err();
        assert_eq!(directory, "not a regular file (a directory)");
    }
}
