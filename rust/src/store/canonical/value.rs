//! A parsed JSON value, its members in input order, and the largest integer it carries exactly.

/// A parsed JSON value. Objects keep their members in input order (duplicates are refused on read).
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// The largest integer a JSON number may carry exactly (I-JSON, RFC 7493).
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

impl Json {
    /// The member `key` of an object, if any.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// Sets (or replaces) the member `key` of an object; a no-op on other values.
    pub fn set(&mut self, key: &str, value: Json) {
        if let Json::Object(members) = self {
            if let Some(slot) = members.iter_mut().find(|(k, _)| k == key) {
                slot.1 = value;
            } else {
                members.push((key.to_string(), value));
            }
        }
    }
}
