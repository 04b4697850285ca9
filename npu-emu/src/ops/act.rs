//! Parametrised activations and their backward forms, as PyTorch defines them: ELU (with
//! `scale`/`input_scale`, which also gives SELU), softplus (`beta`, `threshold`),
//! hardsigmoid, hardswish, mish, log-sigmoid, and the backward of hardtanh and leaky ReLU.
//! Every value is computed in float64 and rounded once into the output.

use super::iter::{map1, map2};
use super::view::View;

/// A forward activation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Act {
    Elu {
        alpha: f64,
        scale: f64,
        input_scale: f64,
    },
    Softplus {
        beta: f64,
        threshold: f64,
    },
    Hardsigmoid,
    Hardswish,
    Mish,
    LogSigmoid,
}

/// The gradient of an activation from the forward input (`x`) or, `EluFromResult`, output.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ActGrad {
    Elu {
        alpha: f64,
        scale: f64,
        input_scale: f64,
    },
    EluFromResult {
        alpha: f64,
        scale: f64,
        input_scale: f64,
    },
    Softplus {
        beta: f64,
        threshold: f64,
    },
    Hardsigmoid,
    Hardswish,
    Mish,
    LogSigmoid,
    Hardtanh {
        min: f64,
        max: f64,
    },
    LeakyRelu {
        slope: f64,
    },
}

fn softplus1(x: f64) -> f64 {
    // log(1 + e^x) without overflow
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The activation of one value.
pub fn act1(a: Act, x: f64) -> f64 {
    match a {
        Act::Elu {
            alpha,
            scale,
            input_scale,
        } => {
            if x > 0.0 {
                scale * x
            } else {
                scale * alpha * (x * input_scale).exp_m1()
            }
        }
        Act::Softplus { beta, threshold } => {
            if x * beta > threshold {
                x
            } else {
                (x * beta).exp().ln_1p() / beta
            }
        }
        Act::Hardsigmoid => (x / 6.0 + 0.5).clamp(0.0, 1.0),
        Act::Hardswish => x * (x + 3.0).clamp(0.0, 6.0) / 6.0,
        Act::Mish => x * softplus1(x).tanh(),
        Act::LogSigmoid => -softplus1(-x),
    }
}

/// The gradient `g * f'(x)` of one value.
pub fn grad1(a: ActGrad, g: f64, x: f64) -> f64 {
    match a {
        ActGrad::Elu {
            alpha,
            scale,
            input_scale,
        } => {
            if x > 0.0 {
                g * scale
            } else {
                g * scale * alpha * input_scale * (x * input_scale).exp()
            }
        }
        ActGrad::EluFromResult {
            alpha,
            scale,
            input_scale,
        } => {
            if x > 0.0 {
                g * scale
            } else {
                g * input_scale * (x + alpha * scale)
            }
        }
        ActGrad::Softplus { beta, threshold } => {
            if x * beta > threshold {
                g
            } else {
                let z = (x * beta).exp();
                g * z / (z + 1.0)
            }
        }
        ActGrad::Hardsigmoid => {
            if x > -3.0 && x < 3.0 {
                g / 6.0
            } else {
                0.0
            }
        }
        ActGrad::Hardswish => {
            if x < -3.0 {
                0.0
            } else if x <= 3.0 {
                g * (x / 3.0 + 0.5)
            } else {
                g
            }
        }
        ActGrad::Mish => {
            let t = softplus1(x).tanh();
            g * (t + x * sigmoid(x) * (1.0 - t * t))
        }
        ActGrad::LogSigmoid => g * sigmoid(-x),
        ActGrad::Hardtanh { min, max } => {
            if x <= min || x >= max {
                0.0
            } else {
                g
            }
        }
        ActGrad::LeakyRelu { slope } => {
            if x > 0.0 {
                g
            } else {
                g * slope
            }
        }
    }
}

/// `out = act(x)` elementwise.
pub fn forward(a: Act, x: &View, out: &View) -> Result<(), String> {
    map1::<f64, f64>(x, out, move |v| act1(a, v))
}

/// `out = g * act'(x)` elementwise.
pub fn backward(a: ActGrad, g: &View, x: &View, out: &View) -> Result<(), String> {
    map2::<f64, f64>(g, x, out, move |gv, xv| grad1(a, gv, xv))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradients_match_finite_differences() {
        let acts = [
            (
                Act::Softplus {
                    beta: 1.0,
                    threshold: 20.0,
                },
                ActGrad::Softplus {
                    beta: 1.0,
                    threshold: 20.0,
                },
            ),
            (Act::Mish, ActGrad::Mish),
            (Act::LogSigmoid, ActGrad::LogSigmoid),
            (Act::Hardswish, ActGrad::Hardswish),
            (Act::Hardsigmoid, ActGrad::Hardsigmoid),
            (
                Act::Elu {
                    alpha: 1.3,
                    scale: 1.05,
                    input_scale: 0.7,
                },
                ActGrad::Elu {
                    alpha: 1.3,
                    scale: 1.05,
                    input_scale: 0.7,
                },
            ),
        ];
        for (f, d) in acts {
            for x in [-4.1, -2.5, -0.3, 0.4, 1.7, 3.6] {
                let h = 1e-6;
                let fd = (act1(f, x + h) - act1(f, x - h)) / (2.0 * h);
                assert!((grad1(d, 1.0, x) - fd).abs() < 1e-5, "{f:?} at {x}");
            }
        }
        let e = Act::Elu {
            alpha: 1.3,
            scale: 1.05,
            input_scale: 0.7,
        };
        let r = ActGrad::EluFromResult {
            alpha: 1.3,
            scale: 1.05,
            input_scale: 0.7,
        };
        let d = ActGrad::Elu {
            alpha: 1.3,
            scale: 1.05,
            input_scale: 0.7,
        };
        assert!((grad1(r, 1.0, act1(e, -0.8)) - grad1(d, 1.0, -0.8)).abs() < 1e-12);
    }
}
