//! Which vector instructions the CPU products use, chosen at run time: a binary built for any
//! x86-64 or arm64 machine runs the widest code the CPU it lands on has.

use std::sync::OnceLock;

/// Names the instruction set instead of detecting it (`portable`, `avx2`, `avx512`, `neon`);
/// one the CPU lacks is refused and detection is used.
pub const ISA_ENV: &str = "ITINERO_CPU_ISA";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// AVX-512 (F, BW, VL) with FMA and F16C.
    Avx512,
    /// AVX2 with FMA and F16C.
    Avx2,
    /// arm64's Advanced SIMD, part of every arm64 CPU.
    Neon,
    /// What the target's baseline allows (SSE2 on x86-64): no wider vectors.
    Portable,
}

impl Isa {
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512",
            Isa::Avx2 => "avx2",
            Isa::Neon => "neon",
            Isa::Portable => "portable",
        }
    }

    /// Whether this CPU can run code for `self`.
    pub fn available(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                is_x86_feature_detected!("avx2")
                    && is_x86_feature_detected!("fma")
                    && is_x86_feature_detected!("f16c")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                Isa::Avx2.available()
                    && is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512vl")
            }
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The widest this CPU runs, or what [`ISA_ENV`] names; said once in the log.
    pub fn chosen() -> Isa {
        static CHOSEN: OnceLock<Isa> = OnceLock::new();
        *CHOSEN.get_or_init(|| {
            let named = std::env::var(ISA_ENV).ok();
            let all = [Isa::Avx512, Isa::Avx2, Isa::Neon, Isa::Portable];
            if let Some(name) = named.as_deref() {
                match all.into_iter().find(|i| i.name() == name) {
                    Some(isa) if isa.available() => {
                        tracing::info!(isa = name, "CPU products use the instruction set {ISA_ENV} names");
                        return isa;
                    }
                    _ => tracing::warn!(
                        "{ISA_ENV}={name} is not an instruction set this CPU runs; detecting one"
                    ),
                }
            }
            let isa = all
                .into_iter()
                .find(|i| i.available())
                .unwrap_or(Isa::Portable);
            if isa == Isa::Portable {
                tracing::warn!(
                    "this CPU has no AVX2 (or NEON): the engine's CPU products run without wide vectors, several times slower"
                );
            } else {
                tracing::info!(isa = isa.name(), "CPU products use vector instructions");
            }
            isa
        })
    }
}
