//! A source's content (its bytes decompressed) read a block at a time, as the Python readers' buffered
//! stream reads it: blocks of 1 MiB from a gzip stream (so a corrupt one fails where Python's does), the
//! bytes themselves when given in memory.

use std::fs::File;
use std::io::Read;

use super::gzip::{BoundedGzip, Compressed};
use super::stored::Shared;

/// The buffer of the stream Python's readers read gzip and in-memory content through.
pub const BLOCK: usize = 1 << 20;

/// Why the whole container is unreadable from here on (corrupt gzip, an expansion past the limit).
#[derive(Clone, Debug, PartialEq)]
pub struct ContainerError(pub String);

/// Where the content's bytes come from.
pub enum Content {
    File(File),
    Gzip(Box<BoundedGzip<Box<dyn Compressed>>>),
    /// Nothing more: bytes given in memory are the first block, whole.
    Done,
}

impl Content {
    /// Up to `wanted` bytes appended to `out` (one raw read of Python's buffered stream): their count,
    /// 0 at the end.
    fn read_into(&mut self, out: &mut Vec<u8>, wanted: usize) -> Result<usize, ContainerError> {
        match self {
            Content::Gzip(gzip) => gzip.read_into(out, wanted).map_err(ContainerError),
            Content::File(file) => read_file(file, out, wanted),
            Content::Done => Ok(0),
        }
    }
}

fn read_file(file: &mut File, out: &mut Vec<u8>, wanted: usize) -> Result<usize, ContainerError> {
    let start = out.len();
    match file.take(wanted as u64).read_to_end(out) {
        Ok(read) => Ok(read),
        Err(error) => {
            out.truncate(start);
            Err(ContainerError(format!("cannot read the file: {error}")))
        }
    }
}

/// The block being read: bytes read into a buffer, or bytes given in memory.
enum Block {
    Read(Vec<u8>),
    Given(Shared),
}

impl Block {
    fn bytes(&self) -> &[u8] {
        match self {
            Block::Read(buffer) => buffer,
            Block::Given(data) => data.as_ref(),
        }
    }
}

/// Content read a block at a time; a reader takes bytes from the front of the current block.
pub struct Stream {
    content: Content,
    block: Block,
    position: usize,
}

impl Stream {
    /// A stream whose first block is read (the head that tells the container), or the failure that
    /// came before any byte.
    pub fn open(mut content: Content) -> Result<Self, ContainerError> {
        let mut first = Vec::new();
        content.read_into(&mut first, BLOCK)?;
        Ok(Stream {
            content,
            block: Block::Read(first),
            position: 0,
        })
    }

    /// Bytes given in memory, read in place.
    pub fn given(data: Shared) -> Self {
        Stream {
            content: Content::Done,
            block: Block::Given(data),
            position: 0,
        }
    }

    /// The first bytes of the content, up to `size`: what Python's reader peeks at.
    pub fn head(&self, size: usize) -> &[u8] {
        let bytes = self.block.bytes();
        &bytes[..bytes.len().min(size)]
    }

    /// The bytes of the current block not yet taken.
    pub fn available(&self) -> &[u8] {
        &self.block.bytes()[self.position..]
    }

    pub fn consume(&mut self, count: usize) {
        self.position += count;
    }

    /// The last `count` bytes taken from the current block.
    pub fn taken(&self, count: usize) -> &[u8] {
        &self.block.bytes()[self.position - count..self.position]
    }

    /// The next block, once the current one is taken: false at the end of the content.
    pub fn refill(&mut self) -> Result<bool, ContainerError> {
        let mut buffer = match std::mem::replace(&mut self.block, Block::Read(Vec::new())) {
            Block::Read(buffer) => buffer,
            Block::Given(_) => Vec::new(),
        };
        buffer.clear();
        self.position = 0;
        let read = self.content.read_into(&mut buffer, BLOCK);
        self.block = Block::Read(buffer);
        Ok(read? > 0)
    }

    /// Up to `wanted` bytes, appended to `out` from the content after the current block, read as
    /// Python's buffered `read` reads past its buffer: whole blocks straight into `out`, then block by
    /// block. Their count; 0 at the end.
    pub fn read_past_block(
        &mut self,
        out: &mut Vec<u8>,
        wanted: usize,
    ) -> Result<usize, ContainerError> {
        let mut remaining = wanted;
        while remaining >= BLOCK {
            let read = self.content.read_into(out, remaining / BLOCK * BLOCK)?;
            if read == 0 {
                return Ok(wanted - remaining);
            }
            remaining -= read;
        }
        let (start, tail) = (out.len(), remaining);
        let mut block_used = 0;
        while block_used < tail {
            let read = self.content.read_into(out, BLOCK - block_used)?;
            if read == 0 {
                break;
            }
            block_used += read;
        }
        out.truncate(start + block_used.min(tail));
        remaining -= block_used.min(tail);
        Ok(wanted - remaining)
    }
}
