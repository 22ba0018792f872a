//! Stored copies and loose messages put aside, encoded (`codec`), in a private temporary file: appended
//! to, never rewritten; an index in memory finds a task by its id (offset, length, context), and each
//! is read back once. The file is unlinked as soon as it is made (on Unix), so it goes when the
//! assembly does, however it ends; elsewhere it is removed when the assembly is dropped.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use super::codec::{decode_copy, decode_loose, encode_copy, encode_loose};
use super::{Loose, StoredCopy};

/// Where one task waits.
struct Entry {
    offset: u64,
    length: usize,
    context_id: Option<String>,
    /// Tasks come back at the end in the order they were put aside.
    order: u64,
}

#[derive(Default)]
pub(super) struct Aside {
    file: Option<TempFile>,
    end: u64,
    tasks: HashMap<String, Entry>,
    next_order: u64,
    /// Batches of loose messages, in the order they came.
    loose: Vec<(u64, usize)>,
}

impl Aside {
    /// Put a task aside; handed back when there is no disk to put it on (it then stays in memory).
    pub(super) fn put(&mut self, copy: StoredCopy) -> Result<(), Box<StoredCopy>> {
        let Some(task_id) = copy.task_id.clone() else {
            return Err(Box::new(copy));
        };
        let Ok(offset) = self.append(&encode_copy(&copy)) else {
            return Err(Box::new(copy));
        };
        let entry = Entry {
            offset,
            length: (self.end - offset) as usize,
            context_id: copy.context_id,
            order: self.next_order,
        };
        self.next_order += 1;
        self.tasks.insert(task_id, entry);
        Ok(())
    }

    /// The task put aside under `task_id`, no longer aside; None if there is none.
    pub(super) fn take(&mut self, task_id: &str) -> Option<StoredCopy> {
        let entry = self.tasks.remove(task_id)?;
        Some(self.read_copy(&entry))
    }

    /// Whether a task is aside (Some), and its context.
    pub(super) fn context_of(&self, task_id: &str) -> Option<Option<&str>> {
        self.tasks
            .get(task_id)
            .map(|entry| entry.context_id.as_deref())
    }

    /// Put a batch of loose messages aside; handed back when there is no disk to put it on.
    pub(super) fn put_loose(&mut self, batch: Vec<Loose>) -> Result<(), Vec<Loose>> {
        match self.append(&encode_loose(&batch)) {
            Ok(offset) => {
                self.loose.push((offset, (self.end - offset) as usize));
                Ok(())
            }
            Err(_) => Err(batch),
        }
    }

    /// The batches of loose messages put aside, in order, one at a time.
    pub(super) fn loose_batches(&self) -> impl Iterator<Item = Vec<Loose>> + '_ {
        self.loose.iter().map(|&(offset, length)| {
            decode_loose(&self.read(offset, length))
                .expect("loose messages put aside read back as written")
        })
    }

    /// Every task still aside, in the order they were put aside, one at a time; the file goes with the
    /// iterator.
    pub(super) fn into_copies(mut self) -> impl Iterator<Item = StoredCopy> {
        let mut entries: Vec<Entry> = self.tasks.drain().map(|(_, entry)| entry).collect();
        entries.sort_by_key(|entry| entry.order);
        entries.into_iter().map(move |entry| self.read_copy(&entry))
    }

    fn read_copy(&self, entry: &Entry) -> StoredCopy {
        decode_copy(&self.read(entry.offset, entry.length))
            .expect("a task put aside reads back as written")
    }

    /// The bytes at `offset`. The file is the assembly's own: failing to read back what it wrote is no
    /// input's fault, and nothing it assembled could be trusted after it.
    fn read(&self, offset: u64, length: usize) -> Vec<u8> {
        let mut bytes = vec![0; length];
        let file = self.file.as_ref().map(|temp| &temp.file);
        let read = file
            .ok_or(io::ErrorKind::NotFound.into())
            .and_then(|mut file| {
                file.seek(SeekFrom::Start(offset))?;
                file.read_exact(&mut bytes)
            });
        if let Err(error) = read {
            panic!("the assembly's temporary file could not be read back: {error}");
        }
        bytes
    }

    /// Write `bytes` at the end of the file (made on first use); where they start.
    fn append(&mut self, bytes: &[u8]) -> io::Result<u64> {
        if self.file.is_none() {
            self.file = Some(TempFile::create()?);
        }
        let offset = self.end;
        if let Some(temp) = self.file.as_mut() {
            temp.file.seek(SeekFrom::Start(offset))?;
            temp.file.write_all(bytes)?;
        }
        self.end = offset + bytes.len() as u64;
        Ok(offset)
    }
}

/// A file only this process can reach, gone when it is dropped (on Unix, from the start).
struct TempFile {
    file: File,
    /// The path to remove on drop, where it could not be unlinked while open.
    path: Option<PathBuf>,
}

static MADE: AtomicU64 = AtomicU64::new(0);

impl TempFile {
    fn create() -> io::Result<TempFile> {
        let directory = std::env::temp_dir();
        let mut attempt = 0;
        loop {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.subsec_nanos());
            let name = format!(
                "archiver-assembly-{}-{}-{nanos}",
                std::process::id(),
                MADE.fetch_add(1, Ordering::Relaxed)
            );
            let path = directory.join(name);
            match private_options().open(&path) {
                Ok(file) => return Ok(TempFile::unlinked(file, path)),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => {
                    attempt += 1
                }
                Err(error) => return Err(error),
            }
        }
    }

    #[cfg(unix)]
    fn unlinked(file: File, path: PathBuf) -> TempFile {
        match std::fs::remove_file(&path) {
            Ok(()) => TempFile { file, path: None },
            Err(_) => TempFile {
                file,
                path: Some(path),
            },
        }
    }

    #[cfg(not(unix))]
    fn unlinked(file: File, path: PathBuf) -> TempFile {
        TempFile {
            file,
            path: Some(path),
        }
    }
}

fn private_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::understand::assemble::CopyKind;

    fn copy(task_id: &str, context: &str) -> StoredCopy {
        let mut copy = StoredCopy::new(
            format!("task:{task_id}"),
            CopyKind::Task,
            Some(task_id.to_string()),
            Some(context.to_string()),
        );
        copy.record_ids.push("r1".to_string());
        copy
    }

    #[test]
    fn copies_come_back_as_put() {
        let mut aside = Aside::default();
        for id in ["a", "b", "c"] {
            assert!(aside.put(copy(id, "ctx")).is_ok());
        }
        assert_eq!(aside.context_of("b"), Some(Some("ctx")));
        assert_eq!(aside.take("b"), Some(copy("b", "ctx")));
        assert_eq!(aside.context_of("b"), None);
        assert!(aside.put(copy("b", "ctx2")).is_ok());
        let ids: Vec<_> = aside.into_copies().map(|copy| copy.key).collect();
        assert_eq!(ids, ["task:a", "task:c", "task:b"]);
    }
}
