//! The tasks in memory by the record bytes that touched them, least recently touched first (Python's
//! `OrderedDict` of task id to bytes, moved to the end on each touch): a queue of touches, each touch
//! stamped, where a touch older than its task's latest is stale and skipped.

use std::collections::{HashMap, VecDeque};

#[derive(Default)]
pub(super) struct Recent {
    /// task id: (stamp of its latest touch, record bytes held for it)
    held: HashMap<String, (u64, usize)>,
    touches: VecDeque<(u64, String)>,
    next_stamp: u64,
    total: usize,
}

impl Recent {
    /// `share` more bytes held for the task, now the most recently touched.
    pub(super) fn touch(&mut self, task_id: &str, share: usize) {
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        let entry = self.held.entry(task_id.to_string()).or_insert((stamp, 0));
        *entry = (stamp, entry.1 + share);
        self.total += share;
        self.touches.push_back((stamp, task_id.to_string()));
        if self.touches.len() > 2 * self.held.len() + 64 {
            let held = &self.held;
            self.touches
                .retain(|(stamp, id)| held.get(id).is_some_and(|(latest, _)| latest == stamp));
        }
    }

    /// The least recently touched task and the bytes it held, no longer counted.
    pub(super) fn pop_least_recent(&mut self) -> Option<(String, usize)> {
        while let Some((stamp, task_id)) = self.touches.pop_front() {
            if let Some(&(latest, held)) = self.held.get(&task_id) {
                if latest == stamp {
                    self.held.remove(&task_id);
                    self.total -= held;
                    return Some((task_id, held));
                }
            }
        }
        None
    }

    pub(super) fn total(&self) -> usize {
        self.total
    }

    pub(super) fn len(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recent_first() {
        let mut recent = Recent::default();
        recent.touch("a", 1);
        recent.touch("b", 2);
        recent.touch("a", 3);
        assert_eq!(recent.total(), 6);
        assert_eq!(recent.pop_least_recent(), Some(("b".to_string(), 2)));
        assert_eq!(recent.pop_least_recent(), Some(("a".to_string(), 4)));
        assert_eq!(recent.pop_least_recent(), None);
        assert_eq!(recent.total(), 0);
    }

    #[test]
    fn stale_touches_are_dropped() {
        let mut recent = Recent::default();
        for _ in 0..1000 {
            recent.touch("a", 1);
        }
        assert!(recent.touches.len() <= 66);
        assert_eq!(recent.pop_least_recent(), Some(("a".to_string(), 1000)));
    }
}
