//! `Arr<T>`: a read-only per-vertex array backed either by a `Vec` (graphs built in memory)
//! or by a slice of a shared read-only file mapping (graphs loaded from `.lgraph`, see
//! the lgraph module). It derefs to `&[T]`, so the engine, LP and simulator index it like a
//! slice and never know where the bytes live; a loaded graph is used in place, not copied.
//!
//! The slice pointer and length are stored directly (no match on every access: the engine's
//! inner loops index these arrays). Code that rewrites an array (re-ordering) builds a new
//! `Vec` and assigns it; `make_mut` copies a mapped array first.

use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use memmap2::Mmap;

/// Element types that may be viewed in place in a little-endian file: every bit pattern of
/// their size is a valid value (`Kind` is mapped only after each byte was checked).
///
/// # Safety
/// Implementors must be plain data without padding or invalid bit patterns.
pub unsafe trait Plain: Copy + Send + Sync + 'static {}
unsafe impl Plain for u8 {}
unsafe impl Plain for u16 {}
unsafe impl Plain for u32 {}
unsafe impl Plain for u64 {}

enum Owner<T> {
    Vec(#[allow(dead_code)] Vec<T>),
    Map(#[allow(dead_code)] Arc<Mmap>),
}

pub struct Arr<T> {
    ptr: NonNull<T>,
    len: usize,
    owner: Owner<T>,
}

// The data is immutable while shared (a Vec owner is only mutated through `&mut self`; a
// mapping is read-only), so an `Arr<T>` is as thread-safe as `&[T]`.
unsafe impl<T: Send + Sync> Send for Arr<T> {}
unsafe impl<T: Send + Sync> Sync for Arr<T> {}

impl<T> Arr<T> {
    pub fn is_mapped(&self) -> bool {
        matches!(self.owner, Owner::Map(_))
    }
}

impl<T: Copy> Arr<T> {
    /// `len` elements of type `T` at byte `offset` of `map`.
    ///
    /// # Safety
    /// The range must lie inside the mapping, be aligned for `T`, and hold valid `T`s.
    pub(crate) unsafe fn mapped(map: &Arc<Mmap>, offset: usize, len: usize) -> Arr<T> {
        let base = map.as_ptr().add(offset) as *mut T;
        Arr { ptr: NonNull::new(base).unwrap_or(NonNull::dangling()), len, owner: Owner::Map(map.clone()) }
    }

    /// The elements, to modify in place (copies a mapped array first). A slice, not the
    /// `Vec`: growing it would move the buffer under the stored pointer.
    pub fn make_mut(&mut self) -> &mut [T] {
        if let Owner::Map(_) = self.owner {
            *self = Arr::from(self.to_vec());
        }
        match &mut self.owner {
            Owner::Vec(v) => v,
            Owner::Map(_) => unreachable!("converted above"),
        }
    }

    pub fn into_vec(self) -> Vec<T> {
        match self.owner {
            Owner::Vec(v) => v,
            Owner::Map(_) => self.to_vec(),
        }
    }
}

impl<T> From<Vec<T>> for Arr<T> {
    fn from(v: Vec<T>) -> Arr<T> {
        // A Vec's buffer does not move when the Vec does, so the pointer stays valid.
        let ptr = NonNull::new(v.as_ptr() as *mut T).unwrap_or(NonNull::dangling());
        Arr { ptr, len: v.len(), owner: Owner::Vec(v) }
    }
}

impl<T> Default for Arr<T> {
    fn default() -> Arr<T> {
        Arr::from(Vec::new())
    }
}

impl<T> Deref for Arr<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: ptr/len describe the owner's live, immutable buffer.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Clone> Clone for Arr<T> {
    fn clone(&self) -> Arr<T> {
        match &self.owner {
            Owner::Vec(v) => Arr::from(v.clone()),
            Owner::Map(m) => Arr { ptr: self.ptr, len: self.len, owner: Owner::Map(m.clone()) },
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Arr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().take(16)).finish()?;
        if self.len > 16 {
            write!(f, " ({} elements)", self.len)?;
        }
        Ok(())
    }
}

impl<T: PartialEq> PartialEq for Arr<T> {
    fn eq(&self, other: &Arr<T>) -> bool {
        **self == **other
    }
}

impl<'a, T> IntoIterator for &'a Arr<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::Arr;

    #[test]
    fn a_vec_backed_array_reads_and_mutates_like_a_vec() {
        let mut a = Arr::from(vec![3u32, 1, 2]);
        assert_eq!(&a[..], &[3, 1, 2]);
        let b = a.clone();
        a.make_mut()[1] = 7;
        assert_eq!((&a[..], &b[..]), (&[3, 7, 2][..], &[3, 1, 2][..]));
        assert!(!a.is_mapped());
        assert_eq!(a.into_vec(), vec![3, 7, 2]);
        let e: Arr<u64> = Arr::default();
        assert!(e.is_empty());
    }
}
