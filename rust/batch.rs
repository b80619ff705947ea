//! Rendering many inputs in parallel on scoped threads, results in input order.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::RenderError;

/// `items.iter().map(f)`, spread over the machine's cores.
///
/// Workers take the next unclaimed index, so one huge item does not hold up a
/// fixed share of the others. A worker that panicked (a bug) becomes an error.
pub fn map<T, R, F>(items: &[T], f: F) -> Result<Vec<R>, RenderError>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len());
    if workers <= 1 {
        return Ok(items.iter().map(&f).collect());
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            done.push((i, f(item)));
        }
        done
    };
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    let finished = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(work)).collect();
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    for worker in finished {
        let done = worker.map_err(|_| RenderError::Value("a render thread failed".into()))?;
        for (i, r) in done {
            slots[i] = Some(r);
        }
    }
    slots.into_iter().map(|r| r.ok_or_else(|| RenderError::Value("a render was lost".into()))).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_input_order() {
        let items: Vec<u64> = (0..1000).collect();
        assert_eq!(super::map(&items, |x| x * 2).unwrap(), items.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert!(super::map(&[] as &[u64], |x| *x).unwrap().is_empty());
    }
}
