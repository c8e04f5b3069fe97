use super::*;

fn template(src: &str) -> ChatTemplate {
    ChatTemplate::new(
        src.to_string(),
        TemplateSource::Gguf,
        "<s>".into(),
        "</s>".into(),
    )
    .unwrap()
}

#[test]
fn renders_with_hf_whitespace_rules_and_python_methods() {
    let t = template(
        "{% for m in messages %}\n  {% if m.role == 'user' %}\n[{{ m.content.strip() | upper }}]\n  {% endif %}\n{% endfor %}{{ bos_token }}",
    );
    let out = t
        .render(
            &[
                Message::new("user", "  hi  "),
                Message::new("assistant", "x"),
            ],
            false,
        )
        .unwrap();
    // trim_blocks drops the newline after a block tag, lstrip_blocks the indentation before it.
    assert_eq!(out, "[HI]\n<s>");
}

#[test]
fn raise_exception_fails_the_render_with_the_template_s_message() {
    let t = template("{{ raise_exception('roles must alternate') }}");
    let err = t.render(&[], true).unwrap_err().to_string();
    assert!(err.contains("roles must alternate"), "{err}");
}

#[test]
fn tojson_writes_what_python_json_dumps_writes() {
    let t = template(
        "{{ {'b': [1, 'é<'], 'a': {}} | tojson }}|{{ [1, {'k': none}] | tojson(indent=2) }}",
    );
    let out = t.render(&[], false).unwrap();
    assert_eq!(
        out,
        "{\"b\": [1, \"é<\"], \"a\": {}}|[\n  1,\n  {\n    \"k\": null\n  }\n]"
    );
    let t = template("{{ {'b': 1, 'a': 'é'} | tojson(sort_keys=true, ensure_ascii=true) }}");
    assert_eq!(
        t.render(&[], false).unwrap(),
        "{\"a\": \"\\u00e9\", \"b\": 1}"
    );
}

#[test]
fn strftime_now_formats_the_current_date() {
    let t = template("{{ strftime_now('%Y') }}");
    let year: i32 = t.render(&[], false).unwrap().parse().unwrap();
    assert!(year >= 2025, "{year}");
}

#[test]
fn syntax_errors_are_reported_at_compile_time() {
    let err = ChatTemplate::new(
        "{% for %}".into(),
        TemplateSource::Gguf,
        String::new(),
        String::new(),
    )
    .unwrap_err();
    assert!(matches!(err, ChatError::Syntax(_)), "{err}");
}

#[test]
fn the_built_in_gemma3_template_folds_the_system_prompt_into_the_first_turn() {
    let t = ChatTemplate::new(
        GEMMA3_TEMPLATE.into(),
        TemplateSource::BuiltIn("gemma3"),
        "<bos>".into(),
        "<eos>".into(),
    )
    .unwrap();
    let out = t
        .render(
            &[
                Message::new("system", "Be brief."),
                Message::new("user", " Hi "),
                Message::new("assistant", "Hello."),
            ],
            true,
        )
        .unwrap();
    assert_eq!(
        out,
        "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n<start_of_turn>model\n"
    );
    let err = t
        .render(&[Message::new("assistant", "first")], true)
        .unwrap_err()
        .to_string();
    assert!(err.contains("Conversation roles must alternate"), "{err}");
}
