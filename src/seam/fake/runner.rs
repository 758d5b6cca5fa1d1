//! The fake [`Runner`]: programs on a fake PATH and their answers, in order.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io;
use std::path::PathBuf;

use super::Journal;
use crate::seam::{Cmd, Output, Runner};

#[derive(Default)]
pub(crate) struct FakeRunner {
    /// Programs that exist on the fake PATH.
    pub programs: BTreeSet<String>,
    /// Programs that are symlinks, to the file name they resolve to in
    /// /usr/sbin (`iptables-save` -> `xtables-legacy-multi`); the others
    /// resolve to themselves. Not modelled: links that leave /usr/sbin,
    /// dangling links and loops (the real `resolve` gives None for the
    /// last two).
    pub links: BTreeMap<String, String>,
    /// Answers, in order; success with no output once they run out.
    pub answers: VecDeque<Output>,
    pub journal: Journal,
    /// Standard input of each run, in order.
    pub stdins: Vec<Vec<u8>>,
}

impl Runner for FakeRunner {
    fn run(&mut self, cmd: &Cmd<'_>) -> io::Result<Output> {
        // A program by name, or by the path `which` gave for it.
        let base = cmd.program.strip_prefix("/usr/sbin/").unwrap_or(cmd.program);
        if !self.programs.contains(base) {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("{}: not found", cmd.program)));
        }
        self.journal.borrow_mut().push(format!("run {}", cmd.display()));
        self.stdins.push(cmd.stdin.unwrap_or_default().to_vec());
        Ok(self.answers.pop_front().unwrap_or(Output { code: Some(0), ..Output::default() }))
    }
    /// As the real one: a program not on PATH is NotFound; one that is
    /// starts and is not waited for (what it then does, such as writing
    /// its pidfile, is not modelled: a test writes that itself).
    fn start(&mut self, cmd: &Cmd<'_>) -> io::Result<()> {
        let base = cmd.program.strip_prefix("/usr/sbin/").unwrap_or(cmd.program);
        if !self.programs.contains(base) {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("{}: not found", cmd.program)));
        }
        self.journal.borrow_mut().push(format!("start {}", cmd.display()));
        Ok(())
    }
    fn which(&mut self, program: &str) -> Option<PathBuf> {
        self.programs.contains(program).then(|| PathBuf::from("/usr/sbin").join(program))
    }
    fn resolve(&mut self, program: &str) -> Option<PathBuf> {
        let path = self.which(program)?;
        Some(self.links.get(program).map_or(path, |to| PathBuf::from("/usr/sbin").join(to)))
    }
}
