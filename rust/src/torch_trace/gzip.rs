//! A gzip trace read member after member, as `gzip -d` reads a concatenation, with anything after the
//! last member that does not start another one an error (`InvalidData`, so `format_invalid`): a
//! decoder that takes every byte for a further member called a few trailing bytes a cut stream
//! (`file_truncated`), pointing at the wrong cause.

use flate2::bufread::GzDecoder;
use std::io::{BufRead, Error, ErrorKind, Read, Result};

/// The members of a gzip stream, decompressed one after another.
pub struct Members<R: BufRead> {
    /// The member being read; `None` once the stream has ended.
    current: Option<GzDecoder<R>>,
}

impl<R: BufRead> Members<R> {
    pub fn new(inner: R) -> Self {
        Self {
            current: Some(GzDecoder::new(inner)),
        }
    }
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        loop {
            let Some(member) = self.current.as_mut() else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This member is whole (its trailer checked): the end, another member, or neither.
            let Some(member) = self.current.take() else {
                return Ok(0);
            };
            let mut inner = member.into_inner();
            let next = inner.fill_buf()?;
            match next.first() {
                None => return Ok(0),
                Some(0x1f) => self.current = Some(GzDecoder::new(inner)),
                Some(_) => {
                    return Err(Error::new(
                        ErrorKind::InvalidData,
                        "data after the end of the compressed stream",
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn read_all(bytes: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        Members::new(std::io::BufReader::with_capacity(7, bytes)).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn members_in_a_row_are_one_stream_and_trailing_bytes_are_not_a_cut() {
        let (a, b) = (gz(b"{\"a\": "), gz(b"1}"));
        assert_eq!(read_all(&[a.clone(), b].concat()).unwrap(), b"{\"a\": 1}");
        assert_eq!(read_all(&a).unwrap(), b"{\"a\": ");
        for tail in [&b"garbage"[..], b"\0", b"x"] {
            let err = read_all(&[a.clone(), tail.to_vec()].concat()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidData, "{tail:?}");
        }
        // Cut inside a member: still the end of input, as before.
        let err = read_all(&a[..a.len() - 3]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
        // A second member that is not gzip after its first byte: damaged.
        let err = read_all(&[a, vec![0x1f, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9]].concat()).unwrap_err();
        assert_ne!(err.kind(), ErrorKind::UnexpectedEof);
    }
}
