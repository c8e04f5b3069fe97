//! The model as a chooser: when the grounding has a few plausible actions and none is sure, a
//! small model reads them as numbered lines and answers with one number. A reply constrained
//! to those numbers (a JSON schema whose choice is an enum) cannot be malformed, and choosing
//! is a far easier task for a model under 1B parameters than writing an action.

use std::sync::Arc;

use serde_json::json;

use super::ground::Candidate;
use super::progress::Reporter;
use super::prompt::Family;
use crate::llm::{Backend, ChatRequest, LlmError, Message};

/// The name its steps are recorded and shown under.
pub const NAME: &str = "chooser";

/// At most this many options are offered.
pub const MAX_OPTIONS: usize = 8;

const INSTRUCTIONS: &str = "You help a person use a web page. Below are their goal, what is \
already done, and the actions possible now. Pick the action that does the next part of the \
goal. Answer 0 if none of them does.";

pub struct Chooser {
    pub backend: Arc<dyn Backend>,
    pub model: String,
    pub family: Family,
}

/// What the model chose, and the size of the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The option picked (an index into the options), `None` when it picked none.
    pub pick: Option<usize>,
    /// The prompt's tokens, as the backend counted them.
    pub prompt_tokens: Option<u64>,
}

impl Chooser {
    /// Asks the model to pick one of `options` (at most [`MAX_OPTIONS`] are offered).
    pub async fn choose(
        &self,
        goal: &str,
        done: &[String],
        title: &str,
        options: &[Candidate],
        progress: Option<&Reporter>,
    ) -> Result<Choice, LlmError> {
        let options = &options[..options.len().min(MAX_OPTIONS)];
        let mut ask = format!("Goal: {goal}\nPage: {title}\n");
        if !done.is_empty() {
            ask.push_str(&format!("Done so far: {}\n", done.join("; ")));
        }
        ask.push_str("Actions:\n");
        for (i, o) in options.iter().enumerate() {
            ask.push_str(&format!("{}. {}\n", i + 1, o.why));
        }
        ask.push_str("0. none of these\nWhich action? Reply as {\"choice\": N}.");
        let messages = if self.family.system_role {
            vec![Message::system(INSTRUCTIONS), Message::user(ask)]
        } else {
            vec![Message::user(format!("{INSTRUCTIONS}\n\n{ask}"))]
        };
        let mut request = ChatRequest::new(self.model.clone(), messages);
        let numbers: Vec<usize> = (0..=options.len()).collect();
        request.schema = Some(json!({
            "type": "object",
            "properties": {"choice": {"type": "integer", "enum": numbers}},
            "required": ["choice"],
            "additionalProperties": false
        }));
        request.temperature = Some(0.0);
        request.max_tokens = Some(16);
        request.context_tokens = Some(self.family.context_tokens as u32);
        let mut sink = Reporter::sink(progress);
        let reply = self.backend.chat(&request, &mut sink).await?;
        Ok(Choice {
            pick: read_choice(&reply.content, options.len()),
            prompt_tokens: reply.prompt_tokens,
        })
    }
}

/// `{"choice": 2}` (or a bare `2`) → index 1; 0, out of range or unreadable → none.
fn read_choice(reply: &str, n: usize) -> Option<usize> {
    let number = serde_json::from_str::<serde_json::Value>(reply.trim())
        .ok()
        .and_then(|v| {
            v.get("choice")
                .and_then(|c| c.as_u64())
                .or_else(|| v.as_u64())
        })
        .or_else(|| {
            reply
                .split(|c: char| !c.is_ascii_digit())
                .find(|s| !s.is_empty())
                .and_then(|s| s.parse().ok())
        })?;
    let k = usize::try_from(number).ok()?;
    (1..=n).contains(&k).then(|| k - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::element;
    use crate::llm::scripted::{Scripted, Step};
    use itinero_shared::{Action, Target};

    fn option(why: &str, index: u32) -> Candidate {
        let e = element(index, "button", None, None, why);
        Candidate {
            action: Action::Click {
                target: Target {
                    index,
                    fingerprint: e.fingerprint.unwrap(),
                },
            },
            confidence: 0.6,
            why: format!("click {why:?}"),
            finishes: true,
        }
    }

    #[test]
    fn a_choice_reads_from_json_or_a_bare_number_and_zero_is_none() {
        assert_eq!(read_choice("{\"choice\": 2}", 3), Some(1));
        assert_eq!(read_choice("3", 3), Some(2));
        assert_eq!(read_choice("{\"choice\": 0}", 3), None);
        assert_eq!(read_choice("{\"choice\": 4}", 3), None);
        assert_eq!(read_choice("no idea", 3), None);
    }

    #[tokio::test]
    async fn the_model_sees_numbered_options_and_its_reply_is_held_to_their_numbers() {
        let script = Arc::new(Scripted::new([Step::reply("{\"choice\": 2}")]));
        let chooser = Chooser {
            backend: script.clone(),
            model: "smollm2".into(),
            family: crate::agent::prompt::family_of("smollm2"),
        };
        let options = [
            option("Delete (beside Ana)", 1),
            option("Delete (beside Bob)", 2),
        ];
        let picked = chooser
            .choose("Delete the row for Bob", &[], "Users", &options, None)
            .await
            .unwrap();
        assert_eq!(picked.pick, Some(1));
        let request = &script.requests()[0];
        let prompt = &request.messages.last().unwrap().content;
        assert!(prompt.contains("1. click \"Delete (beside Ana)\"\n2. click \"Delete (beside Bob)\"\n0. none of these"), "{prompt}");
        assert_eq!(
            request.schema.as_ref().unwrap()["properties"]["choice"]["enum"],
            json!([0, 1, 2])
        );
    }
}
