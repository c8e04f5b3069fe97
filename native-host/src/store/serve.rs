//! Answers the panel's requests for what the store keeps: settings, run history, lessons and
//! site approvals. The session hands every request here first; what is not a store request
//! comes back untouched.
//!
//! Store calls run on the blocking pool ([`Store::call`]). Without a store each request is
//! answered with `Error{store_unavailable}` and the reason it could not be opened.

use itinero_shared::envelope::MessageSet;
use itinero_shared::messages::{
    Deleted, ErrorReply, LessonList, ListLessons, ListRuns, RunList, SiteApprovalList,
};
use itinero_shared::{ErrorCode, ToBrowser, ToHost};

use super::{Store, StoreError, StoreSlot};

/// The reply to `request` if it is a store request, else the request back.
pub async fn answer(slot: &StoreSlot, request: ToHost) -> Result<ToBrowser, ToHost> {
    if !is_store_request(&request) {
        return Err(request);
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
        .call(move |store| reply(store, request))
        .await
        .unwrap_or_else(|e| {
            let code = match e {
                StoreError::Invalid(_) | StoreError::NotAnOrigin(_) => ErrorCode::BadBody,
                StoreError::NoSuchRun(_) => ErrorCode::NotFound,
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
            | ToHost::DeleteRun(_)
            | ToHost::ListLessons(_)
            | ToHost::DeleteLesson(_)
            | ToHost::ListSiteApprovals(_)
            | ToHost::RevokeSiteApproval(_)
    )
}

/// What the panel asked for, in words for an error message.
fn what(msg: &ToHost) -> &'static str {
    match msg {
        ToHost::GetSettings(_) => "read the settings",
        ToHost::SetSettings(_) => "save the settings",
        ToHost::ListRuns(_) => "list the runs",
        ToHost::GetRun(_) => "read the run",
        ToHost::DeleteRun(_) => "delete the run",
        ToHost::ListLessons(_) => "list the lessons",
        ToHost::DeleteLesson(_) => "delete the lesson",
        ToHost::ListSiteApprovals(_) => "list the sites' approvals",
        ToHost::RevokeSiteApproval(_) => "revoke the approval",
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
        other => {
            return Err(StoreError::Invalid(format!(
                "{} is not a request for the store",
                other.type_name()
            )))
        }
    })
}
