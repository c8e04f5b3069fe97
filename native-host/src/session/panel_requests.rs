//! Answers the panel's requests for what the store keeps: settings, run history, lessons and
//! site approvals. The session hands every request here first; what is not a store request
//! comes back untouched.
//!
//! Store calls run on the blocking pool ([`Store::call`]). Without a store each request is
//! answered with `Error{store_unavailable}` and the reason it could not be opened. Replies are
//! made to fit one frame to the browser (under 1 MiB), see [`fit`].

use base64::Engine as _;
use itinero_shared::codec::MAX_TO_BROWSER;
use itinero_shared::envelope::MessageSet;
use itinero_shared::messages::{
    Deleted, ErrorReply, GetStats, LessonList, ListLessons, ListRuns, RunList, SiteApprovalList,
    StatsReport, StepPictureData,
};
use itinero_shared::records::RunDetail;
use itinero_shared::{ErrorCode, ToBrowser, ToHost};

use crate::store::{busiest_sites, days_ago, summarise, Period, Store, StoreError, StoreSlot};

/// The reply to `request` if it is a store request, else the request back (boxed: a request is
/// large, and this path is the rare one).
pub async fn answer(slot: &StoreSlot, request: ToHost) -> Result<ToBrowser, Box<ToHost>> {
    if !is_store_request(&request) {
        return Err(Box::new(request));
    }
    let store = match slot.get() {
        Ok(store) => store,
        Err(why) => {
            return Ok(error(
                ErrorCode::StoreUnavailable,
                format!(
                    "cannot {}: the host's store could not be opened ({why}). Tasks still \
                     run, but nothing is remembered; see the host's log",
                    what(&request)
                ),
            ))
        }
    };
    let kind = what(&request);
    Ok(store
        .call(move |store| reply(store, request).map(fit))
        .await
        .unwrap_or_else(|e| {
            let code = match e {
                StoreError::Invalid(_) | StoreError::NotAnOrigin(_) => ErrorCode::BadBody,
                StoreError::NoSuchRun(_)
                | StoreError::NoSuchSkill(_)
                | StoreError::NoSuchPicture { .. } => ErrorCode::NotFound,
                StoreError::SkillNameTaken(_) => ErrorCode::BadBody,
                _ => {
                    tracing::warn!(store = store.name(), "cannot {kind}: {e}");
                    ErrorCode::Internal
                }
            };
            error(code, format!("cannot {kind}: {e}"))
        }))
}

fn is_store_request(msg: &ToHost) -> bool {
    matches!(
        msg,
        ToHost::GetSettings(_)
            | ToHost::SetSettings(_)
            | ToHost::ListRuns(_)
            | ToHost::GetRun(_)
            | ToHost::GetStepPicture(_)
            | ToHost::GetStats(_)
            | ToHost::DeleteRun(_)
            | ToHost::ListLessons(_)
            | ToHost::DeleteLesson(_)
            | ToHost::ListSiteApprovals(_)
            | ToHost::RevokeSiteApproval(_)
            | ToHost::Skills(_)
    )
}

/// What the panel asked for, in words for an error message.
fn what(msg: &ToHost) -> &'static str {
    match msg {
        ToHost::GetSettings(_) => "read the settings",
        ToHost::SetSettings(_) => "save the settings",
        ToHost::ListRuns(_) => "list the runs",
        ToHost::GetRun(_) => "read the run",
        ToHost::GetStepPicture(_) => "read the step's picture",
        ToHost::GetStats(_) => "sum up the runs",
        ToHost::DeleteRun(_) => "delete the run",
        ToHost::ListLessons(_) => "list the lessons",
        ToHost::DeleteLesson(_) => "delete the lesson",
        ToHost::ListSiteApprovals(_) => "list the sites' approvals",
        ToHost::RevokeSiteApproval(_) => "revoke the approval",
        ToHost::Skills(_) => "answer the skills request",
        _ => "answer this request",
    }
}

fn error(code: ErrorCode, message: String) -> ToBrowser {
    ToBrowser::Error(ErrorReply { code, message })
}

fn reply(store: &Store, request: ToHost) -> Result<ToBrowser, StoreError> {
    Ok(match request {
        ToHost::GetSettings(_) => ToBrowser::Settings(store.settings()?),
        ToHost::SetSettings(set) => ToBrowser::Settings(store.set_settings(&set.settings)?),
        ToHost::ListRuns(list) => ToBrowser::Runs(RunList {
            runs: store.recent_runs(list.limit.min(ListRuns::MAX_LIMIT))?,
        }),
        ToHost::GetRun(get) => ToBrowser::RunDetail(
            store
                .run_detail(get.run_id)?
                .ok_or(StoreError::NoSuchRun(get.run_id))?,
        ),
        ToHost::GetStepPicture(get) => {
            let jpeg = store
                .picture(get.run_id, get.n)?
                .ok_or(StoreError::NoSuchPicture {
                    run: get.run_id,
                    n: get.n,
                })?;
            ToBrowser::StepPicture(StepPictureData {
                run_id: get.run_id,
                n: get.n,
                jpeg_base64: base64::engine::general_purpose::STANDARD.encode(jpeg),
            })
        }
        ToHost::GetStats(get) => {
            let days = get.days.clamp(1, GetStats::MAX_DAYS);
            let periods = summarise(
                &store.run_facts(days_ago(days), None)?,
                Period::from(get.by),
            );
            ToBrowser::Stats(StatsReport {
                by: get.by,
                periods: busiest_sites(periods, StatsReport::MAX_SITES),
            })
        }
        ToHost::DeleteRun(del) => ToBrowser::Deleted(Deleted {
            existed: store.delete_run(del.run_id)?,
        }),
        ToHost::ListLessons(list) => ToBrowser::Lessons(LessonList {
            lessons: store.lessons(
                list.origin.as_deref(),
                list.limit.min(ListLessons::MAX_LIMIT),
            )?,
        }),
        ToHost::DeleteLesson(del) => ToBrowser::Deleted(Deleted {
            existed: store.delete_lesson(del.lesson_id)?,
        }),
        ToHost::ListSiteApprovals(_) => ToBrowser::SiteApprovals(SiteApprovalList {
            approvals: store.site_approvals()?,
        }),
        ToHost::RevokeSiteApproval(revoke) => ToBrowser::Deleted(Deleted {
            existed: store.revoke(&revoke.origin, &revoke.kind)?,
        }),
        ToHost::Skills(request) => ToBrowser::Skills(super::skill_requests::reply(store, request)?),
        other => {
            return Err(StoreError::Invalid(format!(
                "{} is not a request for the store",
                other.type_name()
            )))
        }
    })
}

/// What a reply may take, leaving room for the envelope around it.
const REPLY_BUDGET: usize = MAX_TO_BROWSER - 4096;

fn encoded_len(reply: &ToBrowser) -> usize {
    serde_json::to_vec(reply).map_or(usize::MAX, |v| v.len())
}

/// Makes a reply fit in one frame to the browser (under 1 MiB): a list keeps its newest
/// entries, a run's steps keep their start of each long text (the store keeps all of it).
fn fit(mut reply: ToBrowser) -> ToBrowser {
    while encoded_len(&reply) > REPLY_BUDGET {
        let cut = match &mut reply {
            ToBrowser::Runs(list) => halve(&mut list.runs),
            ToBrowser::Lessons(list) => halve(&mut list.lessons),
            ToBrowser::SiteApprovals(list) => halve(&mut list.approvals),
            ToBrowser::RunDetail(detail) => shorten_steps(detail),
            _ => false,
        };
        if !cut {
            break; // the writer turns what still does not fit into an error reply
        }
    }
    reply
}

fn halve<T>(list: &mut Vec<T>) -> bool {
    if list.len() <= 1 {
        return false;
    }
    list.truncate(list.len() / 2);
    true
}

/// Cuts every step's long texts to the next shorter length; false once at the shortest.
fn shorten_steps(detail: &mut RunDetail) -> bool {
    const LENGTHS: [usize; 4] = [4000, 1000, 200, 40];
    let longest = detail
        .steps
        .iter()
        .flat_map(|s| [&s.thought, &s.action_summary, &s.outcome_text])
        .map(|t| t.chars().count())
        .max()
        .unwrap_or(0);
    // A text cut to `l` is `l` + 1 characters long (the ellipsis): go below that.
    let Some(&to) = LENGTHS.iter().find(|&&l| l + 1 < longest) else {
        return false;
    };
    for step in &mut detail.steps {
        for text in [
            &mut step.thought,
            &mut step.action_summary,
            &mut step.outcome_text,
        ] {
            if let Some((at, _)) = text.char_indices().nth(to) {
                text.truncate(at);
                text.push('…');
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::records::{RunId, RunStatus, RunSummary, StepRecord};

    fn summary(goal: String) -> RunSummary {
        RunSummary {
            id: RunId(1),
            goal,
            start_url: "https://shop.example/".into(),
            origin: None,
            tab_id: None,
            backend: "ollama".into(),
            model: "m".into(),
            started_at: 0,
            finished_at: None,
            status: RunStatus::Succeeded,
            answer: None,
            steps: 0,
        }
    }

    #[test]
    fn long_lists_keep_their_newest_entries_within_a_frame() {
        let runs: Vec<_> = (0..200)
            .map(|i| summary(format!("{i} {}", "x".repeat(30_000))))
            .collect();
        let ToBrowser::Runs(list) = fit(ToBrowser::Runs(RunList { runs })) else {
            panic!()
        };
        // 6 MB: halved three times.
        assert_eq!(list.runs.len(), 25);
        assert!(list.runs[0].goal.starts_with("0 "));
        assert!(encoded_len(&ToBrowser::Runs(list)) <= REPLY_BUDGET);
    }

    #[test]
    fn a_long_run_keeps_every_step_with_its_texts_shortened() {
        let steps: Vec<_> = (1..=200)
            .map(|n| StepRecord {
                n,
                thought: "é".repeat(30_000),
                action_summary: "click [1]".into(),
                ..Default::default()
            })
            .collect();
        let reply = fit(ToBrowser::RunDetail(RunDetail {
            run: summary("g".into()),
            steps,
            pictures: Vec::new(),
        }));
        assert!(encoded_len(&reply) <= REPLY_BUDGET);
        let ToBrowser::RunDetail(detail) = reply else {
            panic!()
        };
        assert_eq!(detail.steps.len(), 200);
        let thought = &detail.steps[0].thought;
        assert!(thought.ends_with('…') && thought.chars().count() <= 4001);
        assert_eq!(detail.steps[0].action_summary, "click [1]");
    }

    #[test]
    fn small_replies_are_untouched() {
        let reply = ToBrowser::Runs(RunList {
            runs: vec![summary("g".into())],
        });
        assert_eq!(fit(reply.clone()), reply);
    }
}
