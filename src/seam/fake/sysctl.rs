//! The fake [`Sysctl`]: /proc/sys keys in memory.

use std::collections::BTreeMap;
use std::io;

use super::Journal;
use crate::seam::Sysctl;

#[derive(Default)]
pub(crate) struct FakeSysctl {
    pub values: BTreeMap<String, String>,
    pub journal: Journal,
}

impl Sysctl for FakeSysctl {
    fn get(&mut self, key: &str) -> io::Result<String> {
        self.values.get(key).cloned().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn set(&mut self, key: &str, value: &str) -> io::Result<()> {
        if !self.values.contains_key(key) {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        self.values.insert(key.to_string(), value.to_string());
        self.journal.borrow_mut().push(format!("sysctl {key}={value}"));
        Ok(())
    }
}
