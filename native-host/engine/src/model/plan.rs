//! A way of running the layers (decode, or a prefill batch): its activations, its step uniform
//! and its dispatches, bound once at load so that a step only writes its inputs and records.

use crate::gpu::{Bound, Destination, Gpu, NormedInput, Output, StepUniform};

use super::bind::{bind_layers, bind_layers_normed, Kernels, Shape};
use super::scratch::Scratch;
use super::tuning::Products;
use super::weights::{Layer, Weights};
use super::{HParams, ModelError};

pub(super) struct Plan {
    pub(super) s: Scratch,
    pub(super) step: wgpu::Buffer,
    /// The layers' dispatches, in one compute pass.
    pub(super) pass: Vec<Bound>,
}

impl Plan {
    /// One token a step, with the fewest dispatches `p` allows.
    pub(super) fn decode(
        gpu: &Gpu,
        k: &Kernels,
        p: &Products,
        shape: Shape<'_>,
        layers: &[Layer],
    ) -> Result<Self, ModelError> {
        let s = Scratch::new(gpu, shape.hp, 1);
        let step = StepUniform::new(0, 1).buffer(gpu);
        let pass = match &p.normed {
            Some(nm) => {
                bind_layers_normed(gpu, k, nm, shape, layers, &s, &step, |m, x, y, out| {
                    p.decode.matvec.bind_output(gpu, m, x, y, out)
                })?
            }
            None => bind_layers(gpu, k, None, shape, layers, &s, &step, |m, x, y, out| {
                p.decode.bind(gpu, m, x, y, &step, out)
            })?,
        };
        Ok(Self { s, step, pass })
    }

    /// Up to `batch` tokens a step, through the matrix-matrix kernels.
    pub(super) fn prefill(
        gpu: &Gpu,
        k: &Kernels,
        p: &Products,
        shape: Shape<'_>,
        layers: &[Layer],
        batch: u32,
    ) -> Result<Self, ModelError> {
        let s = Scratch::new(gpu, shape.hp, batch);
        let step = StepUniform::new(0, batch).buffer(gpu);
        let pass = bind_layers(
            gpu,
            k,
            p.joined.as_ref(),
            shape,
            layers,
            &s,
            &step,
            |m, x, y, out| p.matmul.bind_output(gpu, m, x, y, &step, batch, out),
        )?;
        Ok(Self { s, step, pass })
    }

    /// Dispatches recorded each time.
    pub(super) fn dispatches(&self) -> usize {
        self.pass.len()
    }

    /// The final norm and the output matrix on this (decode) plan's activations, into `logits`.
    pub(super) fn bind_logits(
        &self,
        gpu: &Gpu,
        k: &Kernels,
        p: &Products,
        hp: &HParams,
        weights: &Weights,
        logits: &wgpu::Buffer,
    ) -> Result<Vec<Bound>, ModelError> {
        let d = &self.s;
        let (output, output_norm) = (&weights.output, &weights.output_norm);
        Ok(match &p.normed {
            Some(nm) => nm.bind_split(
                gpu,
                output,
                NormedInput {
                    x: &d.x,
                    norm: output_norm,
                    eps: hp.rms_eps,
                },
                &[Destination::new(logits, hp.vocab)],
                None,
            )?,
            None => {
                let mut pass =
                    vec![k
                        .norm
                        .bind(gpu, &d.x, output_norm, &d.h, 1, hp.dim, hp.rms_eps)?];
                pass.extend(
                    p.decode
                        .bind(gpu, output, &d.h, logits, &self.step, Output::Write)?,
                );
                pass
            }
        })
    }
}
