//! The protobuf wire format, as far as a Perfetto trace needs it: varints, tags, fixed64 and
//! length-delimited fields, written into a reusable buffer (no protobuf dependency: the messages
//! are few and their field numbers are checked against Perfetto's own `.proto` files by a test).

/// Wire types.
const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;

/// A message being written: fields append to `buf`; nested messages are written into their own
/// `Message` and appended with [`Message::message`].
#[derive(Debug, Default, Clone)]
pub struct Message {
    pub buf: Vec<u8>,
}

pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // The low seven bits, with the continuation bit set; the cast keeps exactly those bits.
        #[allow(clippy::cast_possible_truncation)]
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    #[allow(clippy::cast_possible_truncation)]
    buf.push(v as u8);
}

fn tag(buf: &mut Vec<u8>, field: u32, wire: u32) {
    put_varint(buf, u64::from((field << 3) | wire));
}

impl Message {
    pub fn new() -> Self {
        Message::default()
    }

    pub fn clear(&mut self) {
        self.buf.clear();
    }

    pub fn uint(&mut self, field: u32, v: u64) -> &mut Self {
        tag(&mut self.buf, field, VARINT);
        put_varint(&mut self.buf, v);
        self
    }

    /// An `int64`/`int32` field: negative values as ten-byte two's complement, as protobuf does.
    pub fn int(&mut self, field: u32, v: i64) -> &mut Self {
        #[allow(clippy::cast_sign_loss)]
        self.uint(field, v as u64)
    }

    pub fn boolean(&mut self, field: u32, v: bool) -> &mut Self {
        self.uint(field, u64::from(v))
    }

    pub fn fixed64(&mut self, field: u32, v: u64) -> &mut Self {
        tag(&mut self.buf, field, FIXED64);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn double(&mut self, field: u32, v: f64) -> &mut Self {
        self.fixed64(field, v.to_bits())
    }

    pub fn bytes(&mut self, field: u32, v: &[u8]) -> &mut Self {
        tag(&mut self.buf, field, LEN);
        put_varint(&mut self.buf, v.len() as u64);
        self.buf.extend_from_slice(v);
        self
    }

    pub fn string(&mut self, field: u32, v: &str) -> &mut Self {
        self.bytes(field, v.as_bytes())
    }

    pub fn message(&mut self, field: u32, m: &Message) -> &mut Self {
        self.bytes(field, &m.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_match_the_protobuf_encoding() {
        let mut buf = Vec::new();
        put_varint(&mut buf, 300);
        assert_eq!(buf, [0xac, 0x02]);
        let mut m = Message::new();
        m.uint(1, 150);
        assert_eq!(m.buf, [0x08, 0x96, 0x01]);
        let mut m = Message::new();
        m.string(2, "testing");
        assert_eq!(m.buf, b"\x12\x07testing");
        let mut m = Message::new();
        m.int(1, -1);
        assert_eq!(m.buf.len(), 11);
        let mut m = Message::new();
        m.fixed64(47, 1);
        assert_eq!(m.buf, [0xf9, 0x02, 1, 0, 0, 0, 0, 0, 0, 0]);
    }
}
