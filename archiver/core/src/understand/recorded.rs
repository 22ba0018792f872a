//! The envelopes of `archiver record`'s spool segments (`a2a_record` version 1), read into the model.
//!
//! An envelope is the proxy's account of one exchange (`kind` `exchange`: request and response), of a
//! stream's start (`stream-open`: its request), of one event of a stream (`event`: the event's own JSON
//! rides with it) or of a stream's end (`stream-end`). What each request, response and event carries is
//! read exactly as the same JSON in a plain capture (`events_of`); the envelope adds what the archive
//! can use: the exchange id links a request to its answer, and its time stamps a task whose status
//! carries none.

use super::dialects::{message_of, text_of, timestamp_of};
use super::events::events_of;
use super::model::{Event, Request};
use super::python_text::{equals_int, raised_by_python, repr_of, str_of};
use super::{NotUnderstood, Understood};
use crate::json::{Map, Value};

const KINDS: [&str; 4] = ["exchange", "stream-open", "event", "stream-end"];
/// Bindings whose responses need not be A2A results: a body no recogniser knows is passed by, not refused.
const LENIENT_BINDINGS: [&str; 3] = ["card", "push-config", "other"];

pub fn is_envelope(value: &Value) -> bool {
    matches!(value, Value::Object(map) if map.contains_key("a2a_record"))
}

fn refused<T>(reason: String) -> Understood<T> {
    Err(NotUnderstood(reason))
}

/// The exchange id and the A2A events of one envelope (and, for a stream event, the event's JSON; JSON
/// null is no event, as Python's None was); NotUnderstood naming what is wrong with an envelope that is
/// not the contract's.
pub fn recorded_events(
    envelope: &Value,
    event: Option<&Value>,
) -> Understood<(Option<String>, Vec<Event>)> {
    let (envelope, kind) = checked(envelope)?;
    let exchange = text_of(envelope.get("exchange"));
    unreadable_bodies(envelope, exchange.as_deref())?;
    let mut events = match kind {
        "event" => match event.filter(|event| !event.is_null()) {
            Some(event) => events_of(event)?,
            None => {
                return refused("a2a-record event envelope without the event's data lines".into())
            }
        },
        "stream-end" => Vec::new(),
        _ => {
            let mut events = request(envelope, exchange.as_deref())?;
            if kind == "exchange" {
                events.extend(response(envelope)?);
            }
            events
        }
    };
    if let Some(time) = timestamp_of(envelope.get("time"))? {
        stamp(&mut events, time);
    }
    Ok((exchange, events))
}

/// A body the proxy kept but could not read (compressed in a coding it does not decode, not UTF-8, not
/// JSON on a JSON binding: `request_unreadable` or `response_unreadable` says why) hides what it held:
/// the record is not understood, so the audit names it.
fn unreadable_bodies(envelope: &Map, exchange: Option<&str>) -> Understood<()> {
    for (side, key) in [
        ("request", "request_unreadable"),
        ("response", "response_unreadable"),
    ] {
        if let Some(why @ Value::String(_)) = envelope.get(key) {
            let (exchange, why) = (exchange.unwrap_or("?"), str_of(why));
            return refused(format!(
                "the {side} body of exchange {exchange} could not be read: {why}"
            ));
        }
    }
    Ok(())
}

fn checked(envelope: &Value) -> Understood<(&Map, &'static str)> {
    let Value::Object(envelope) = envelope else {
        return refused("a2a-record envelope is not a JSON object".into());
    };
    let version = envelope.get("a2a_record").unwrap_or(&Value::Null);
    if !equals_int(version, 1) {
        return refused(format!(
            "a2a-record envelope of version {}, not 1",
            repr_of(version)
        ));
    }
    let kind_value = envelope.get("kind").unwrap_or(&Value::Null);
    let Some(kind) = KINDS
        .into_iter()
        .find(|kind| kind_value.as_str() == Some(*kind))
    else {
        return refused(format!(
            "a2a-record envelope of unknown kind {}",
            repr_of(kind_value)
        ));
    };
    if kind != "stream-end" && !matches!(envelope.get("exchange"), Some(Value::String(_))) {
        return refused(format!("a2a-record {kind} envelope without an exchange id"));
    }
    Ok((envelope, kind))
}

/// The request's user message, keyed by the exchange (a JSON-RPC request, or a REST body `{"message"}`).
fn request(envelope: &Map, exchange: Option<&str>) -> Understood<Vec<Event>> {
    let Some(Value::Object(body)) = envelope.get("request") else {
        return Ok(Vec::new());
    };
    let params = if body.contains_key("jsonrpc") || body.contains_key("method") {
        body.get("params").and_then(Value::as_object)
    } else {
        Some(body)
    };
    let Some(message) = params
        .and_then(|params| params.get("message"))
        .filter(|m| !m.is_null())
    else {
        return Ok(Vec::new());
    };
    let method = text_of(body.get("method")).or_else(|| text_of(envelope.get("path")));
    Ok(vec![Event::Request(Request {
        rpc_id: exchange.map(|id| Value::String(id.into())),
        method,
        message: Some(message_of(message)?),
    })])
}

/// The response's events; none from a body no recogniser knows when the binding need not answer in A2A.
fn response(envelope: &Map) -> Understood<Vec<Event>> {
    let Some(body) = envelope.get("response").filter(|body| !body.is_null()) else {
        return Ok(Vec::new());
    };
    match events_of(body) {
        Err(reason) if !raised_by_python(&reason.0) && lenient(envelope) => Ok(Vec::new()),
        other => other,
    }
}

fn lenient(envelope: &Map) -> bool {
    let binding = envelope.get("binding").and_then(Value::as_str);
    let path = str_of(envelope.get("path").unwrap_or(&Value::Null));
    binding.is_some_and(|binding| LENIENT_BINDINGS.contains(&binding))
        || path.contains("pushNotificationConfig")
}

/// A task or status update with no time of its own takes the envelope's.
fn stamp(events: &mut [Event], time: i64) {
    for event in events {
        let status = match event {
            Event::Task(task) => &mut task.status,
            Event::StatusUpdate(update) => &mut update.status,
            _ => continue,
        };
        status.timestamp.get_or_insert(time);
    }
}
