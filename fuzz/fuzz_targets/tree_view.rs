#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memprompt_fuzz::targets::tree(data, false);
});
