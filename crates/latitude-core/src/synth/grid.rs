//! Process grids of the halo and sweep motifs.
//!
//! Default grid shape (the job file may fix some dimensions): the most balanced
//! factorization d₁ ≥ d₂ (≥ d₃) of the rank count, like `MPI_Dims_create` — the smallest
//! largest factor, then the smallest second factor. Rank layout is x fastest:
//! r = cx + px·(cy + py·cz). Ranks beyond px·py·pz are idle in that motif.

/// Most balanced 2-factor split of n ≥ 1: (a, b) with a ≥ b, a·b = n.
pub fn dims2(n: u64) -> (u64, u64) {
    let mut b = (n as f64).sqrt() as u64 + 1;
    while b * b > n {
        b -= 1;
    }
    while !n.is_multiple_of(b) {
        b -= 1;
    }
    (n / b, b)
}

/// Most balanced 3-factor split of n ≥ 1: the smallest a whose cofactor splits into factors
/// ≤ a (most balanced), so (a, b, c) with a ≥ b ≥ c and a·b·c = n.
pub fn dims3(n: u64) -> (u64, u64, u64) {
    let mut a = 1;
    loop {
        if n.is_multiple_of(a) {
            let (b, c) = dims2(n / a);
            if b <= a {
                return (a, b, c);
            }
        }
        a += 1;
    }
}

/// Fill the unset (0) entries of `dims` for a job of `n` ranks: they split the ranks left
/// over by the set ones (⌊n / product of the set ones⌋) as evenly as possible, largest
/// first. Err if the set ones already need more than n ranks.
pub fn fill_dims(dims: &mut [u64], n: u64) -> Result<(), String> {
    let set = dims.iter().filter(|&&d| d > 0).try_fold(1u64, |acc, &d| acc.checked_mul(d).filter(|&x| x <= n));
    let Some(set) = set else {
        return Err(format!("the given grid dimensions need more ranks than the job has ({n})"));
    };
    let left = n / set;
    let free: Vec<usize> = (0..dims.len()).filter(|&i| dims[i] == 0).collect();
    let split: Vec<u64> = match free.len() {
        0 => Vec::new(),
        1 => vec![left],
        2 => {
            let (a, b) = dims2(left);
            vec![a, b]
        }
        _ => {
            let (a, b, c) = dims3(left);
            vec![a, b, c]
        }
    };
    for (i, d) in free.into_iter().zip(split) {
        dims[i] = d;
    }
    Ok(())
}

/// Coordinates of rank r on a grid (x fastest).
pub fn coords(r: u32, dims: &[u32; 3]) -> [u32; 3] {
    [r % dims[0], (r / dims[0]) % dims[1], r / (dims[0] * dims[1])]
}

/// Rank at coordinates c.
pub fn rank_at(c: [u32; 3], dims: &[u32; 3]) -> u32 {
    c[0] + dims[0] * (c[1] + dims[1] * c[2])
}

/// Neighbour of `r` one step along axis `axis` in direction `dir` (−1 or +1); None outside
/// a non-periodic grid, and None for an axis of extent 1 (no self messages).
pub fn neighbour(r: u32, dims: &[u32; 3], axis: usize, dir: i32, periodic: bool) -> Option<u32> {
    let n = dims[axis];
    if n <= 1 {
        return None;
    }
    let mut c = coords(r, dims);
    let x = c[axis] as i64 + dir as i64;
    c[axis] = if x < 0 || x >= n as i64 {
        if !periodic {
            return None;
        }
        x.rem_euclid(n as i64) as u32
    } else {
        x as u32
    };
    Some(rank_at(c, dims))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_like_dims_create() {
        assert_eq!(dims2(16), (4, 4));
        assert_eq!(dims2(12), (4, 3));
        assert_eq!(dims2(7), (7, 1));
        assert_eq!(dims3(16), (4, 2, 2));
        assert_eq!(dims3(64), (4, 4, 4));
        assert_eq!(dims3(32), (4, 4, 2));
        assert_eq!(dims3(12), (3, 2, 2));
        assert_eq!(dims3(7), (7, 1, 1));
        assert_eq!(dims3(1), (1, 1, 1));
        let mut d = [0, 2, 0];
        fill_dims(&mut d, 17).unwrap();
        assert_eq!(d, [4, 2, 2]);
        assert!(fill_dims(&mut [3, 3], 8).is_err());
    }

    #[test]
    fn neighbours() {
        let dims = [4, 2, 2];
        assert_eq!(coords(13, &dims), [1, 1, 1]);
        assert_eq!(neighbour(0, &dims, 0, -1, false), None);
        assert_eq!(neighbour(0, &dims, 0, -1, true), Some(3));
        assert_eq!(neighbour(0, &dims, 1, 1, false), Some(4));
        assert_eq!(neighbour(0, &dims, 2, 1, false), Some(8));
        assert_eq!(neighbour(0, &[1, 1, 1], 0, 1, true), None);
    }
}
