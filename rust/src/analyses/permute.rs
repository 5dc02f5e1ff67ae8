//! A slice put in a given order in place (the analyses' records are sorted through 4-byte
//! indices, without a second copy of the records).

/// Puts `items` in `order` in place: afterwards `items[k]` is what `items[order[k]]` was (`order`
/// a permutation of the indices; anything else leaves the items as a permutation of themselves).
pub fn permute<T: Copy>(items: &mut [T], order: &[u32]) {
    let mut done = vec![false; items.len()];
    for start in 0..items.len() {
        if done.get(start).copied().unwrap_or(true) {
            continue;
        }
        // Follow the cycle through `start`: each place takes the item its order names.
        let Some(&first) = items.get(start) else {
            continue;
        };
        let mut at = start;
        loop {
            if let Some(flag) = done.get_mut(at) {
                *flag = true;
            }
            let from = order.get(at).map_or(start, |&i| i as usize);
            if from == start || done.get(from).copied().unwrap_or(true) {
                if let Some(slot) = items.get_mut(at) {
                    *slot = first;
                }
                break;
            }
            let Some(&item) = items.get(from) else {
                break;
            };
            if let Some(slot) = items.get_mut(at) {
                *slot = item;
            }
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_puts_every_item_where_the_order_says() {
        // Every permutation of five items (cycles of every length), against the plain gather.
        let items: Vec<u32> = vec![10, 11, 12, 13, 14];
        let mut orders: Vec<Vec<u32>> = vec![vec![]];
        for _ in 0..items.len() {
            let mut longer = Vec::new();
            for o in &orders {
                for i in 0..items.len() as u32 {
                    if !o.contains(&i) {
                        longer.push([o.clone(), vec![i]].concat());
                    }
                }
            }
            orders = longer;
        }
        assert_eq!(orders.len(), 120);
        for order in orders {
            let mut got = items.clone();
            permute(&mut got, &order);
            let want: Vec<u32> = order.iter().map(|&i| items[i as usize]).collect();
            assert_eq!(got, want, "{order:?}");
        }
    }
}
