"""fingerprint: the Rust core's XXH3-128 equals the `xxhash` package's on the surrogatepass UTF-8.

The core hashes an ASCII str in place, and any other through a 16 KB buffer it encodes into:
in one call when the UTF-8 fits, streamed when it does not. These cases cross every size class
of XXH3 and both of those paths, in each of the three str widths.
"""

import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st
from strategies import any_char

import memprompt as mp

SCRATCH_BYTES = 16 * 1024


def expected(text: str) -> int:
    return xxhash.xxh3_128_intdigest(text.encode("utf-8", "surrogatepass"))


#: One character of each UTF-8 length, and of each str width (U+00E9 is Latin-1, U+2192 UCS-2,
#: U+1F600 UCS-4; a lone surrogate is 3 bytes of surrogatepass UTF-8).
WIDE = ("\u00e9", "\u2192", "\U0001f600", "\ud800")


@pytest.mark.parametrize("wide", ["", *WIDE])
@pytest.mark.parametrize("length", [*range(0, 300), 1023, 1024, 1025, 4095, 4096, 4097])
def test_every_xxh3_size_class(wide, length):
    text = (wide + "abcdefghijklmnopqrstuvwxyz" * (length // 26 + 1))[:length]
    assert mp.fingerprint(text) == expected(text)


@pytest.mark.parametrize("wide", ["", *WIDE])
@pytest.mark.parametrize("delta", [-5, -1, 0, 1, 7, 100_000])
def test_at_and_past_the_buffer(wide, delta):
    """UTF-8 about as long as the buffer, and UTF-8 far longer, streamed through it."""
    filler = "x\n" if not wide else ("y" * 9 + wide)
    per_unit = len(filler.encode("utf-8", "surrogatepass")) / len(filler)
    text = (filler * (SCRATCH_BYTES // len(filler) + 1))[: int(SCRATCH_BYTES / per_unit) + delta]
    assert mp.fingerprint(text) == expected(text)


def test_latin1_with_ascii_blocks_hashed_in_place():
    """A Latin-1 str is read 4 KB at a time: blocks all ASCII are hashed as they are."""
    for at in (0, 4095, 4096, 70_000, 199_999):
        text = "a" * 200_000
        text = text[:at] + "\u00ff" + text[at + 1 :]
        assert mp.fingerprint(text) == expected(text)


@given(st.lists(st.one_of(any_char, st.text(alphabet="ab\n", min_size=1, max_size=5000)), max_size=40))
def test_any_text(pieces):
    text = "".join(pieces)
    assert mp.fingerprint(text) == expected(text)


#: Code points at each UTF-8 length's edges, lone surrogates and NUL: text drawn from these
#: alone is dense, so that most groups of 32 units hold several that are not ASCII.
DENSE = (
    "a",
    "\x00",
    "\x7f",
    "\x80",
    "\u00ff",
    "\u07ff",
    "\u0800",
    "\u2192",
    "\ud800",
    "\udfff",
    "\uffff",
    "\U00010000",
    "\U0001f600",
    "\U0010ffff",
)


@given(st.data())
def test_dense_text_of_every_width(data):
    """Groups of many units that are not ASCII, of one to four bytes each, encoded by SIMD lanes:
    text from a few of those code points (some pools only Latin-1 or only UCS-2, ASCII as often
    as the pool holds "a"), as it is, with U+10000 after it (a 4-byte str) and after U+0100."""
    pool = data.draw(st.lists(st.sampled_from(DENSE), min_size=1, max_size=5))
    # Long enough for whole groups: Hypothesis alone draws mostly short lists.
    length, rnd = data.draw(st.integers(0, 3000)), data.draw(st.randoms(use_true_random=False))
    text = "".join(rnd.choices(pool, k=length))
    for s in (text, text + "\U00010000", "\u0100" + text):
        assert mp.fingerprint(s) == expected(s)
