//! Throughput of the format conversions against a plain copy of the same bytes.
//!
//! `cargo run --release -p npu-emu --example formats_bench [MiB] [reps] [fp16|fp32|int8]`
//!
//! Each repetition times a plain `copy_from_slice` of the source size (glibc memcpy, as
//! `aclrtMemcpy` uses) and then every conversion, interleaved so that load from other processes
//! hits both alike; the figures are the best of the repetitions.

use npu_emu::formats::*;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mib: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(64);
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(7);
    let (dtype, es, dname) = match args.get(3).map(String::as_str) {
        Some("fp32") => (DT_FLOAT, 4, "fp32"),
        Some("int8") => (DT_INT8, 1, "int8"),
        _ => (DT_FLOAT16, 2, "fp16"),
    };
    let bytes = mib << 20;
    let elems = bytes / es;
    let src: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8 + 1).collect();
    // Shapes of `elems` fp16 elements.
    let hw = elems / 16 / 64;
    let cases: Vec<(String, i32, Vec<i64>, i32)> = vec![
        (
            format!("NCHW->NC1HWC0 [16,64,{hw}] {dname}"),
            FORMAT_NCHW,
            vec![16, 64, 1, hw as i64],
            FORMAT_NC1HWC0,
        ),
        (
            format!("NCHW->NC1HWC0 [1,16,1,{}] {dname}", elems / 16),
            FORMAT_NCHW,
            vec![1, 16, 1, (elems / 16) as i64],
            FORMAT_NC1HWC0,
        ),
        (
            format!("NHWC->NC1HWC0 [16,1,{hw},64] {dname}"),
            FORMAT_NHWC,
            vec![16, 1, hw as i64, 64],
            FORMAT_NC1HWC0,
        ),
        (
            format!("ND->FRACTAL_NZ [{},4096] {dname}", elems / 4096),
            FORMAT_ND,
            vec![(elems / 4096) as i64, 4096],
            FORMAT_FRACTAL_NZ,
        ),
        (
            format!("ND->FRACTAL_NZ [16,{},2048] {dname}", elems / 16 / 2048),
            FORMAT_ND,
            vec![16, (elems / 16 / 2048) as i64, 2048],
            FORMAT_FRACTAL_NZ,
        ),
        (
            format!("NCHW->NC1HWC0 [16,4,1,{}] {dname} (C < C0)", elems / 64),
            FORMAT_NCHW,
            vec![16, 4, 1, (elems / 64) as i64],
            FORMAT_NC1HWC0,
        ),
        (
            format!("NHWC->NC1HWC0 [16,1,{},4] {dname} (C < C0)", elems / 64),
            FORMAT_NHWC,
            vec![16, 1, (elems / 64) as i64, 4],
            FORMAT_NC1HWC0,
        ),
        (
            format!("NCHW->FRACTAL_Z [{},1024,4,4] {dname}", elems / 16384),
            FORMAT_NCHW,
            vec![(elems / 16384) as i64, 1024, 4, 4],
            FORMAT_FRACTAL_Z,
        ),
        (
            format!("HWCN->FRACTAL_Z [4,4,1024,{}] {dname}", elems / 16384),
            FORMAT_HWCN,
            vec![4, 4, 1024, (elems / 16384) as i64],
            FORMAT_FRACTAL_Z,
        ),
    ];
    let mut plans = Vec::new();
    for (name, f, shape, pf) in &cases {
        let req = |sf, ss: &'static [i64], df, ds| Request {
            src_format: sf,
            src_shape: ss,
            dst_format: df,
            dst_shape: ds,
            dtype,
            groups: 1,
            rule: C0Rule::Ge,
        };
        let shape: &'static [i64] = Box::leak(shape.clone().into_boxed_slice());
        let fwd = plan(&req(*f, shape, *pf, None)).expect("plan");
        let pshape: &'static [i64] = Box::leak(fwd.dst_shape().to_vec().into_boxed_slice());
        let inv = plan(&req(*pf, pshape, *f, Some(shape))).expect("plan");
        plans.push((name.clone(), fwd, inv));
    }
    let max_dst = plans.iter().map(|p| p.1.dst_bytes()).max().unwrap();
    let mut out = vec![0u8; max_dst];
    let mut back = vec![0u8; bytes];
    let mut copy_dst = vec![0u8; bytes];
    // Touch every page once so no measurement pays the first-touch faults.
    out.fill(1);
    back.fill(1);
    copy_dst.fill(1);
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let mut best_copy = f64::MAX;
    let mut best = vec![(f64::MAX, f64::MAX); plans.len()];
    for _ in 0..reps {
        best_copy = best_copy.min(time(&mut || copy_dst.copy_from_slice(&src)));
        for (k, (_, fwd, inv)) in plans.iter().enumerate() {
            let tf = time(&mut || fwd.run(&src, &mut out).unwrap());
            let ti = time(&mut || inv.run(&out, &mut back).unwrap());
            assert!(back == src, "round trip failed");
            best[k].0 = best[k].0.min(tf);
            best[k].1 = best[k].1.min(ti);
        }
    }
    let gbs = |t: f64| bytes as f64 / t / 1e9;
    println!(
        "plain copy {mib} MiB: {:.2} GB/s (best of {reps}; {} threads available)",
        gbs(best_copy),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for ((name, fwd, _), (tf, ti)) in plans.iter().zip(best) {
        println!(
            "{name}: forward {:.2} GB/s = {:.2}x copy, inverse {:.2} GB/s = {:.2}x copy \
             (private side {:.1}x the plain bytes)",
            gbs(tf),
            best_copy / tf,
            gbs(ti),
            best_copy / ti,
            fwd.dst_bytes() as f64 / fwd.src_bytes() as f64
        );
    }
}
