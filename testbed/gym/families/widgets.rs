//! Fields that take a value in their own format or by their own controls: a date or a time
//! given in words, a slider, a counter set with its − and + buttons, and a date picked from a
//! calendar a month at a time.

use maud::{html, PreEscaped};

use super::super::page::{one, Chrome, CITIES};
use super::super::{Family, Spec};
use super::{field, form_site, posted, say};

const MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

pub const DATE_WORDS: Family = Family {
    name: "date-words",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let (label, name, button) = one(
            rng,
            &[
                ("Departure date", "departure", "Search flights"),
                ("Check-in date", "check_in", "Check availability"),
                ("Start date", "start", "Save"),
                ("Delivery date", "delivery", "Continue"),
            ],
        );
        let (year, month, day) = (rng.u32(2027..2029), rng.u32(1..13), rng.u32(1..29));
        let iso = format!("{year}-{month:02}-{day:02}");
        let month_name = MONTHS[month as usize - 1];
        let written = say(
            rng,
            &[
                format!("{day} {month_name} {year}"),
                format!("{month_name} {day}, {year}"),
                format!("{} {day} {year}", &month_name[..3]),
            ],
        );
        let l = label.to_lowercase();
        let goal = say(
            rng,
            &[
                format!("Set the {l} to {written} and click {button}."),
                format!("Enter {written} as the {l}, then press {button}."),
                format!("Choose {written} for the {l} and click {button}."),
            ],
        );
        let from = one(rng, CITIES);
        let page = chrome.page(
            "Plan",
            html! {
                form method="post" action="plan" {
                    (field("From", "from", "text", from))
                    (field(label, name, "date", ""))
                    button type="submit" { (button) }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "plan", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "plan").is_some_and(|h| {
                    h.get(name) == Some(iso.as_str()) && h.get("from") == Some(from)
                })
            }),
        }
    },
};

pub const TIME_WORDS: Family = Family {
    name: "time-words",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let (label, name, button) = one(
            rng,
            &[
                ("Pick-up time", "pickup", "Book"),
                ("Alarm time", "alarm", "Save"),
                ("Meeting time", "meeting", "Schedule"),
                ("Reminder time", "reminder", "Set reminder"),
            ],
        );
        let (hour, minute) = (rng.u32(1..24), one(rng, &[0u32, 15, 30, 45]));
        let wire = format!("{hour:02}:{minute:02}");
        let (h12, half) = match hour {
            0 => (12, "am"),
            1..=11 => (hour, "am"),
            12 => (12, "pm"),
            _ => (hour - 12, "pm"),
        };
        let written = say(
            rng,
            &[
                format!("{h12}:{minute:02} {half}"),
                format!("{h12}:{minute:02} {}", half.to_uppercase()),
                if minute == 0 {
                    format!("{h12} {half}")
                } else {
                    format!("{h12}.{minute:02}{half}")
                },
            ],
        );
        let l = label.to_lowercase();
        let goal = say(
            rng,
            &[
                format!("Set the {l} to {written}, then click {button}."),
                format!("Make the {l} {written} and press {button}."),
                format!("Enter {written} as the {l} and click {button}."),
            ],
        );
        let page = chrome.page(
            "Schedule",
            html! {
                form method="post" action="time" {
                    (field(label, name, "time", "09:00"))
                    (field("Note", "note", "text", ""))
                    button type="submit" { (button) }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "time", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "time").is_some_and(|h| h.get(name) == Some(wire.as_str()))
            }),
        }
    },
};

pub const SLIDER: Family = Family {
    name: "slider",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let sliders = [
            ("Volume", "volume", 0u32, 100u32, 5u32),
            ("Brightness", "brightness", 0, 100, 5),
            ("Font size", "font_size", 10, 32, 1),
            ("Maximum price", "max_price", 0, 500, 10),
        ];
        let mut order = sliders.to_vec();
        rng.shuffle(&mut order);
        order.truncate(rng.usize(2..4));
        let start: Vec<u32> = order
            .iter()
            .map(|s| s.2 + s.4 * rng.u32(0..=(s.3 - s.2) / s.4))
            .collect();
        let (label, name, lo, hi, step) = order[0];
        let mut target = lo + step * rng.u32(0..=(hi - lo) / step);
        while target == start[0] {
            target = lo + step * rng.u32(0..=(hi - lo) / step);
        }
        let button = one(rng, &["Save", "Apply"]);
        let l = label.to_lowercase();
        let goal = say(
            rng,
            &[
                format!("Set the {l} to {target} and click {button}."),
                format!("Move the {l} slider to {target}, then press {button}."),
                format!("Change {l} to {target} and {}.", button.to_lowercase()),
            ],
        );
        let page = chrome.page(
            "Preferences",
            html! {
                form method="post" action="prefs" {
                    @for (s, v) in order.iter().zip(&start) {
                        div style="margin:8px 0" {
                            label { (s.0) " "
                                input type="range" name=(s.1) min=(s.2) max=(s.3) step=(s.4) value=(v);
                            }
                        }
                    }
                    button type="submit" { (button) }
                }
            },
        );
        let keep: Vec<(&str, String)> = order
            .iter()
            .zip(&start)
            .skip(1)
            .map(|(s, v)| (s.1, v.to_string()))
            .collect();
        let target = target.to_string();
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "prefs", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "prefs").is_some_and(|h| {
                    h.get(name) == Some(target.as_str())
                        && keep.iter().all(|(k, v)| h.get(k) == Some(v.as_str()))
                })
            }),
        }
    },
};

/// Counters that keep a hidden input in step with the number shown between their buttons.
const COUNTER_JS: &str = r#"
document.querySelectorAll('[data-counter]').forEach(g => {
  const input = g.querySelector('input');
  const shown = g.querySelector('output');
  const min = +input.dataset.min, max = +input.dataset.max;
  g.querySelectorAll('button').forEach(b => b.addEventListener('click', () => {
    const v = Math.min(max, Math.max(min, +input.value + (+b.dataset.step)));
    input.value = v; shown.textContent = v;
  }));
});
"#;

pub const COUNTER: Family = Family {
    name: "counter",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let groups = [
            ("Adults", "adults", 1u32),
            ("Children", "children", 0),
            ("Rooms", "rooms", 1),
        ];
        let start: Vec<u32> = groups.iter().map(|g| g.2 + rng.u32(0..2)).collect();
        let at = rng.usize(..groups.len());
        let (label, name, _) = groups[at];
        let mut target = rng.u32(2..7);
        while target == start[at] {
            target = rng.u32(2..7);
        }
        let button = one(rng, &["Search", "Update"]);
        let l = label.to_lowercase();
        let goal = say(
            rng,
            &[
                format!("Set the number of {l} to {target}, then click {button}."),
                format!("Change {l} to {target} and press {button}."),
                format!("Make it {target} {l} and click {button}."),
            ],
        );
        let page = chrome.page(
            "Find a stay",
            html! {
                form method="post" action="stay" {
                    @for (g, v) in groups.iter().zip(&start) {
                        div data-counter="" role="group" aria-label=(g.0) style="margin:8px 0" {
                            span { (g.0) } " "
                            button type="button" data-step="-1" aria-label={ "Fewer " (g.0.to_lowercase()) } { "−" }
                            " " output { (v) } " "
                            button type="button" data-step="1" aria-label={ "More " (g.0.to_lowercase()) } { "+" }
                            input type="hidden" name=(g.1) value=(v) data-min=(g.2) data-max="9";
                        }
                    }
                    button type="submit" { (button) }
                }
                script { (PreEscaped(COUNTER_JS)) }
            },
        );
        let want: Vec<(&str, String)> = groups
            .iter()
            .zip(&start)
            .map(|(g, v)| (g.1, if g.1 == name { target } else { *v }.to_string()))
            .collect();
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "stay", "Searching."),
            check: Box::new(move |hits, _| {
                posted(hits, "stay")
                    .is_some_and(|h| want.iter().all(|(k, v)| h.get(k) == Some(v.as_str())))
            }),
        }
    },
};

/// An inline calendar: a month at a time, with buttons to the month before and after, its days
/// as buttons; a day pressed is kept in a hidden input for the form and shown beside it.
const CALENDAR_JS: &str = r#"
document.querySelectorAll('[data-calendar]').forEach(cal => {
  const names = ['January','February','March','April','May','June','July','August','September','October','November','December'];
  const input = document.getElementById(cal.dataset.input);
  const shown = document.getElementById(cal.dataset.shown);
  const title = cal.querySelector('.month');
  const grid = cal.querySelector('tbody');
  let y = +cal.dataset.year, m = +cal.dataset.month;
  const pad = n => String(n).padStart(2, '0');
  function draw() {
    title.textContent = names[m] + ' ' + y;
    grid.textContent = '';
    const first = (new Date(y, m, 1).getDay() + 6) % 7;
    const days = new Date(y, m + 1, 0).getDate();
    let row = grid.insertRow();
    for (let i = 0; i < first; i++) row.insertCell();
    for (let d = 1; d <= days; d++) {
      if (row.cells.length === 7) row = grid.insertRow();
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = d;
      if (cal.dataset.labels) b.setAttribute('aria-label', names[m] + ' ' + d + ', ' + y);
      const iso = y + '-' + pad(m + 1) + '-' + pad(d);
      if (input.value === iso) b.setAttribute('aria-pressed', 'true');
      b.addEventListener('click', () => {
        input.value = iso;
        shown.textContent = d + ' ' + names[m] + ' ' + y;
        draw();
      });
      row.insertCell().appendChild(b);
    }
  }
  cal.querySelector('[data-step="-1"]').addEventListener('click', () => { m--; if (m < 0) { m = 11; y--; } draw(); });
  cal.querySelector('[data-step="1"]').addEventListener('click', () => { m++; if (m > 11) { m = 0; y++; } draw(); });
  draw();
});
"#;

pub const CALENDAR: Family = Family {
    name: "calendar",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let (label, name, button) = one(
            rng,
            &[
                ("Check-in", "check_in", "Search"),
                ("Departure", "departure", "Find flights"),
                ("Appointment", "appointment", "Book"),
                ("Delivery day", "delivery", "Continue"),
            ],
        );
        let (year, month) = (2027, rng.u32(0..12));
        let ahead = rng.u32(0..4);
        let (ty, tm) = (year + (month + ahead) / 12, (month + ahead) % 12);
        let day = rng.u32(1..29);
        let iso = format!("{ty}-{:02}-{day:02}", tm + 1);
        let month_name = MONTHS[tm as usize];
        let written = say(
            rng,
            &[
                format!("{day} {month_name} {ty}"),
                format!("{month_name} {day}, {ty}"),
            ],
        );
        let l = label.to_lowercase();
        let goal = say(
            rng,
            &[
                format!("Pick {written} as the {l} date and click {button}."),
                format!("Set the {l} date to {written}, then press {button}."),
                format!("Choose {written} for {l} and click {button}."),
            ],
        );
        let guests = rng.u32(1..5).to_string();
        let labels = rng.bool();
        let page = chrome.page(
            "Plan your trip",
            html! {
                form method="post" action="plan" {
                    (field("Guests", "guests", "number", &guests))
                    p { (label) " date: " span id="shown" { "not chosen" } }
                    input type="hidden" id="picked" name=(name) value="";
                    div data-calendar="" data-input="picked" data-shown="shown"
                        data-year=(year) data-month=(month) data-labels=[labels.then_some("1")]
                        role="group" aria-label={ (label) " calendar" } {
                        button type="button" data-step="-1" aria-label="Previous month" { "‹" }
                        " " strong class="month" {} " "
                        button type="button" data-step="1" aria-label="Next month" { "›" }
                        table {
                            thead { tr { @for d in ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"] { th { (d) } } } }
                            tbody {}
                        }
                    }
                    button type="submit" { (button) }
                }
                script { (PreEscaped(CALENDAR_JS)) }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "plan", "Searching."),
            check: Box::new(move |hits, _| {
                posted(hits, "plan").is_some_and(|h| {
                    h.get(name) == Some(iso.as_str()) && h.get("guests") == Some(guests.as_str())
                })
            }),
        }
    },
};
