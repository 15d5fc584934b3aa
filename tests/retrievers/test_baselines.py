"""The bm25 and extractive baselines, and the shared BM25 ranking, over real FinanceBench filings."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from pageindex.llm import ScriptedModel, make_client
from pageindex.retrievers import RetrieverConfigError, retrieve
from pageindex.retrievers.extractive import (
    _answer_of,
    decimal_comma,
    page_candidates,
    period_months,
    question_date_month,
    question_months,
    question_years,
    unit_of,
)
from pageindex.retrievers.ranking import expand_query, match_titles, ranker_for, tokenize
from tests.retrievers.policies import CAPEX_Q, shown_pages, usage_of

ANSWER = {"status": "answer", "answer": "$1,577 million",
          "sources": [{"node_id": "", "page": 60, "quote": "(1,577)"}], "confidence": 0.9}


def assert_usage_exact(result, sm):
    prompt, completion, calls = usage_of(sm)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.llm_calls) == (
        prompt, completion, calls)


# ------------------------------------------------------------------ ranking
def test_tokenize_and_expand():
    assert tokenize("Purchases of property, plant and equipment (PP&E): 1,577") == [
        "purchas", "property", "plant", "equipment", "pp", "1577"]
    assert "purchases property plant equipment" in expand_query("What is the capital expenditure?")


@pytest.mark.parametrize(
    "forms",
    [("sale", "sales"), ("repurchase", "repurchased", "repurchases", "repurchasing"), ("price", "pricing"),
     ("employee", "employees"), ("issue", "issued", "issues"), ("lease", "leases", "leased")],
)
def test_a_word_and_its_inflections_are_one_token(forms):
    """The base form keeps a final silent "e" that "-ed", "-es" and "-ing" drop: both go to one stem
    ("How much did the company repurchase" found "repurchased" only by chance)."""
    assert len({tuple(tokenize(form)) for form in forms}) == 1, [tokenize(f) for f in forms]


def test_the_stemmer_keeps_unlike_words_apart():
    unlike = ("rate", "ratio", "process", "proceeds", "basis", "note", "net")
    assert len({tokenize(w)[0] for w in unlike}) == len(unlike)


def test_page_ranking_finds_the_cash_flow_statement(tree_3m):
    ranker = ranker_for(tree_3m, "page")
    assert ranker is ranker_for(tree_3m, "page")  # built once per document
    pages = ranker.top_pages(CAPEX_Q, 5)
    assert len(pages) == 5 and 60 in pages
    assert ranker.top_pages(CAPEX_Q, 5, exclude_pages={60}) == [p for p in ranker.top_pages(CAPEX_Q, 6)
                                                                 if p != 60][:5]
    assert ranker.search("zzqx flurbo", 5) == []
    sections = ranker_for(tree_3m, "section").search(CAPEX_Q, 3)
    assert [h.rank for h in sections] == [1, 2, 3]
    assert all(tree_3m.get(h.chunk.key).is_leaf for h in sections)


def test_title_matching(tree_3m):
    assert match_titles(tree_3m, "cash flow statement", min_score=85)[0].node_id == "item_8/cash_flows"
    assert match_titles(tree_3m, "note on long-term debt", min_score=85)[0].node_id == "item_8/note_12"
    assert match_titles(tree_3m, "zzqx flurbo") == []


# ------------------------------------------------------------------ bm25
def test_bm25_answers_from_the_top_pages(tree_3m):
    sm = ScriptedModel(replies=[ANSWER])
    result = retrieve(tree_3m, CAPEX_Q, retriever="bm25", llm=make_client("scripted", scripted=sm))
    expected = ranker_for(tree_3m, "page").top_pages(CAPEX_Q, 5)
    assert result.status == "answer" and result.answer == "$1,577 million"
    assert result.extra["retrieved_pages"] == expected
    assert [r["pages"][0] for r in result.extra["ranked"]] == expected
    markers = [int(p) for p in re.findall(r"\[page (\d+)", sm.requests[0].last_user)]
    assert markers == expected  # shown in rank order, each once
    assert result.pages_fetched == sorted(expected) == shown_pages(sm)
    assert result.sources[0].verified is True
    assert result.prompt_version == "answer_from_pages_v1"
    assert_usage_exact(result, sm)


def test_bm25_sections_are_unrolled_and_capped(tree_3m):
    sm = ScriptedModel(replies=[ANSWER])
    result = retrieve(tree_3m, CAPEX_Q, retriever="bm25", llm=make_client("scripted", scripted=sm),
                      unit="section", top_k=6, max_pages=3)
    hits = ranker_for(tree_3m, "section").search(CAPEX_Q, 6)
    unrolled = list(dict.fromkeys(p for h in hits for p in h.chunk.pages))
    assert len(unrolled) > 3 and any(len(h.chunk.pages) > 1 for h in hits)
    assert result.extra["retrieved_pages"] == unrolled[:3]
    unrolled = unrolled[:3]
    assert result.pages_fetched == sorted(unrolled) == shown_pages(sm)


def test_bm25_trace_says_which_pages_it_took_when_max_pages_caps_them(tree_3m):
    """Session 26's fresh-user trial: with max_pages=3 the trace said `top 5: pages [11, 6, 12]`, five
    ranked and three listed, as if three were the top five. It lists the ranked pages and the ones taken."""
    sm = ScriptedModel(replies=[ANSWER, ANSWER])
    llm = make_client("scripted", scripted=sm)
    result = retrieve(tree_3m, CAPEX_Q, retriever="bm25", llm=llm, max_pages=3)
    ranked = ranker_for(tree_3m, "page").top_pages(CAPEX_Q, 5)
    decision = next(e for e in result.trace if e.kind == "decision")
    assert decision.message == (
        f"bm25 (page) top 5: pages {ranked}; the first 3 shown to the model (max_pages=3): {ranked[:3]}"
    )
    assert result.extra["retrieved_pages"] == ranked[:3] and shown_pages(sm) == sorted(ranked[:3])
    uncapped = retrieve(tree_3m, CAPEX_Q, retriever="bm25", llm=make_client("scripted", scripted=sm))
    said = next(e for e in uncapped.trace if e.kind == "decision").message
    assert said == f"bm25 (page) top 5: pages {ranked}"


def test_bm25_without_matching_words_fails_without_a_model_call(tree_3m):
    sm = ScriptedModel(replies=[])
    result = retrieve(tree_3m, "zzqx flurbo?", retriever="bm25", llm=make_client("scripted", scripted=sm))
    assert result.status == "fail" and sm.requests == [] and result.pages_fetched == []


def test_bm25_malformed_replies_are_bounded(tree_3m):
    sm = ScriptedModel(policy=lambda req: "not json at all")
    result = retrieve(tree_3m, CAPEX_Q, retriever="bm25", llm=make_client("scripted", scripted=sm))
    assert result.status == "fail" and result.error_kind == "invalid_reply"  # the model, not the server
    assert len(sm.requests) == 3
    assert_usage_exact(result, sm)


def test_bm25_options_are_checked(tree_3m):
    llm = make_client("scripted", scripted=ScriptedModel())
    with pytest.raises(RetrieverConfigError, match="unknown option 'k'"):
        retrieve(tree_3m, CAPEX_Q, retriever="bm25", llm=llm, k=3)
    with pytest.raises(RetrieverConfigError, match="option 'unit'"):
        retrieve(tree_3m, CAPEX_Q, retriever="bm25", llm=llm, unit="chapter")


# ------------------------------------------------------------------ extractive
def test_statement_rows_with_year_columns(tree_3m):
    rows = {c.label: c for c in page_candidates(tree_3m.page_text(60), 60) if c.kind == "row"}
    ppe = rows["Purchases of property, plant and equipment (PP&E)"]
    assert ppe.values == ["(1,577)", "(1,373)", "(1,420)"] and ppe.years == ["2018", "2017", "2016"]
    selected = {c.label: c for c in page_candidates(tree_3m.page_text(14), 14) if c.kind == "row"}
    assert selected["Net sales"].values[:2] == ["$32,765", "$31,657"]
    assert selected["Net sales"].years == ["2018", "2017", "2016", "2015", "2014"]


def test_rows_in_one_cell_per_line_layout(fb_dir):
    """FinanceBench's own evidence text puts each cell on its own line; rows are rebuilt from it."""
    first = json.loads((fb_dir / "questions.jsonl").read_text().splitlines()[0])
    text = first["evidence"][0]["evidence_text"]
    rows = {c.label: c for c in page_candidates(text, 60) if c.kind == "row"}
    ppe = rows["Purchases of property, plant and equipment (PP&E)"]
    assert ppe.values == ["(1,577)", "(1,373)", "(1,420)"] and ppe.years == ["2018", "2017", "2016"]
    assert question_years("FY2017 - FY2019 average, vs 2016") == ["2017", "2019", "2016"]


def test_extractive_answers_without_a_model(tree_3m):
    result = retrieve(tree_3m, CAPEX_Q, retriever="extractive")
    assert result.status == "answer"
    assert result.answer == "Purchases of property, plant and equipment (PP&E): (1,577) (2018; millions)"
    src = result.sources[0]
    assert src.page in result.extra["retrieved_pages"] and src.quote == "(1,577)" and src.verified is True
    assert result.usage.llm_calls == 0 and result.usage.total_tokens == 0
    assert result.pages_fetched == sorted(result.extra["retrieved_pages"])
    assert result.extra["retrieved_pages"] == ranker_for(tree_3m, "page").top_pages(CAPEX_Q, 5)


def test_extractive_picks_the_asked_year_column(tree_3m):
    result = retrieve(tree_3m, "What were 3M's net sales in FY2017?",
                      retriever="extractive")
    assert result.status == "answer"
    assert result.answer == "Net sales: $31,657 (2017; dollars in millions, except per share amounts)"
    assert result.sources[0].page == 14 and result.sources[0].verified is True


GROUPED = """INCOME STATEMENTS
(In millions, except per share amounts)
Three Months Ended Twelve Months Ended
June 30, June 30,
2025 2024 2025 2024
Total revenue 76,441 64,727 281,724 245,122
Net income $27,233 $22,036 $101,832 $88,136
"""


@pytest.mark.parametrize(
    "query,value",
    [
        ("What was net income in the twelve months ended June 30, 2025?", "$101,832"),
        ("What was net income in the three months ended June 30, 2025?", "$27,233"),
        ("What was net income in Q4 FY2025?", "$27,233"),  # a quarter is three months
        ("What was net income in the fourth quarter of 2024?", "$22,036"),
        ("What was net income in FY2025?", "$101,832"),  # a year and no period: the longest period
        ("What was total revenue in the 12 months ended June 30, 2024?", "245,122"),
        ("What was net income in the nine months ended June 30, 2025?", "$101,832"),  # not in it: longest
    ],
)
def test_columns_grouped_by_period_follow_the_questions_period(query, value):
    """Trial 12: Microsoft's 8-K income statement gave the three-month figure for "twelve months
    ended June 30, 2025" (the first 2025 column). Written from the rule on a made page."""
    rows = {c.label: c for c in page_candidates(GROUPED, 9) if c.kind == "row"}
    assert rows["Net income"].months == [3, 3, 12, 12] and rows["Net income"].years == ["2025", "2024"] * 2
    label = "Total revenue" if "revenue" in query else "Net income"
    answer, quote = _answer_of(rows[label], question_years(query), question_months(query))
    assert quote == value, answer


INLINE = """Second Quarter Results
Adjusted EPS (Table 6) $0.96 $0.90
Identical sales (Table 4)(1) 1.0% 5.8%
Operating (loss) profit ($479) $954
Note 5 1,200 (35)
Row 5 500 (35)
Level 3 assets 42 40
The ratio is 1.31 a year after and the target range is 2.30 to 2.50.
"""


def test_a_number_of_the_label_stays_in_the_label():
    """A row on one line was cut at its first number: "Adjusted EPS (Table 6) $0.96 $0.90" was the row
    "Adjusted EPS (Table" of "6 | $0.96 | $0.90" (the answer's value was 6), "Note 5 1,200 (35)" the
    row "Note" of 5; "($479)" could not start the figures, and a line of prose ending in a figure was a
    row. Written from the rule on a made page."""
    rows = {c.label: c.values for c in page_candidates(INLINE, 1) if c.kind == "row"}
    assert rows == {
        "Adjusted EPS (Table 6)": ["$0.96", "$0.90"],
        "Identical sales (Table 4)(1)": ["1.0%", "5.8%"],
        "Operating (loss) profit": ["($479)", "$954"],
        "Note 5": ["1,200", "(35)"],
        "Row 5": ["500", "(35)"],
        "Level 3 assets": ["42", "40"],
    }
    sentences = [c.text for c in page_candidates(INLINE, 1) if c.kind == "sentence"]
    assert sentences[-1] == "The ratio is 1.31 a year after and the target range is 2.30 to 2.50."
    rows = {c.label: c for c in page_candidates(INLINE, 1) if c.kind == "row"}
    assert _answer_of(rows["Adjusted EPS (Table 6)"], [])[1] == "$0.96"


def test_a_wrapped_label_is_one_label_line_not_a_paragraph():
    """A row whose label starts in lower case is a label wrapped over two lines, joined to the line
    before; when that line ended a paragraph (bullets with no full stop), the whole paragraph became
    the label, and its many words outscored the row asked for. Written from the rule on a made page."""
    page = (
        "Guidance\n"
        "• Identical sales of 1.0% – 2.0%, with underlying growth of 2.5% – 3.5% after adjusting for\n"
        "the effect of the terminated agreement with the pharmacy benefit manager in every region\n"
        "• Adjusted net earnings per diluted share of $4.45 – $4.60, including an estimated benefit\n"
        "from the 53rd week of approximately $0.15\n"
        "Adjustments to reconcile net income to net cash\n"
        "provided by operating activities 1,234 1,100\n"
    )
    rows = [c.label for c in page_candidates(page, 1) if c.kind == "row"]
    assert rows == [
        "from the 53rd week of approximately",
        "Adjustments to reconcile net income to net cash provided by operating activities",
    ]


DATED = """BALANCE SHEETS
Description As of March 31, 2022 As of September 30, 2022
Inventories 204,183 295,347
(From April 1, 2022 to September 30, 2022)
Other 1 2
QUARTER-END
July 30, January 29,
2023 2023
Total assets 49,555 41,182
"""


@pytest.mark.parametrize(
    "query,month,answer",
    [
        ("What were inventories as of September 30, 2022?", 9, "Inventories: 295,347 (Sep 2022)"),
        ("What were inventories as of March 31, 2022?", 3, "Inventories: 204,183 (Mar 2022)"),
        ("What were total assets as of January 29, 2023?", 1, "Total assets: 41,182 (Jan 2023)"),
        ("What were total assets at July 2023?", 7, "Total assets: 49,555 (Jul 2023)"),
        ("What were total assets in 2023?", None, "Total assets: 49,555 (Jul 2023)"),  # no date: the first
    ],
)
def test_columns_dated_in_one_year_follow_the_questions_date(query, month, answer):
    """A balance sheet dated "As of March 31, 2022 | As of September 30, 2022" (a half-year report) or
    "July 30, | January 29," over "2023 2023" (a fiscal year ending in January): the first header was
    read as a row, "... As of September" of 30 and 2022, so its columns had no year; the second's two
    2023 columns could not be told apart. A date range is one period, not two columns. Written from the
    rule on a made page."""
    assert question_date_month(query) == month
    rows = {c.label: c for c in page_candidates(DATED, 4) if c.kind == "row"}
    assert rows["Inventories"].ends == [3, 9] and rows["Total assets"].ends == [7, 1]
    assert rows["Other"].years == ["2022", "2022"] and rows["Other"].ends == [3, 9]  # the range set nothing
    label, value = answer.split(" (")[0].split(": ")
    assert _answer_of(rows[label], question_years(query), question_months(query), month) == (answer, value)


CHANGE = """Results of Operations
(In millions) 2023 2022 % Change
Net sales $ 1,200 $ 1,000 20 %
Gross margin 40.0 % 38.0 % 2.0 %
"""


def test_year_columns_beside_a_change_column():
    """"2023 2022 % Change" over "$ 1,200 $ 1,000 20 %": three figures for two years lined up with
    none, so the answer listed all three and quoted the first whatever year was asked. Written from
    the rule on a made page."""
    rows = {c.label: c for c in page_candidates(CHANGE, 2) if c.kind == "row"}
    assert rows["Net sales"].years == ["2023", "2022", ""]
    assert _answer_of(rows["Net sales"], ["2022"]) == ("Net sales: $1,000 (2022; in millions)", "$1,000")
    assert _answer_of(rows["Net sales"], []) == ("Net sales: $1,200 (2023; in millions)", "$1,200")
    assert rows["Gross margin"].years == []  # all percentages, three of them: not lined up


TEN_Q = """CONDENSED CONSOLIDATED STATEMENTS OF INCOME
(In millions)
Three Months Ended Six Months Ended
July 30, July 31, July 30, July 31,
2023 2022 2023 2022
Revenue 13,507 6,704 20,699 14,992
Cash dividends paid 99 100 199 199
ASCENDING
2022 2023
Google Cloud 6,276 8,031
"""


@pytest.mark.parametrize(
    "query,label,value",
    [
        ("How much was paid in cash dividends in the first half of fiscal year 2024?", "Cash dividends paid",
         "199"),  # a half year is six months; fiscal 2024 is not a header year: the latest year
        ("What was revenue in the second quarter of fiscal year 2024?", "Revenue", "13,507"),
        ("What was revenue in H1 FY2024?", "Revenue", "20,699"),
        ("What was revenue in the first half of 2022?", "Revenue", "14,992"),
        ("What was Google Cloud revenue?", "Google Cloud", "8,031"),  # no year: the latest, not the first
    ],
)
def test_a_half_year_and_a_fiscal_year_the_header_does_not_name(query, label, value):
    """A 10-Q's columns: "first half of fiscal year 2024" (NVIDIA's six months ended July 30, 2023)
    took the first column, three months: a half year was no period, and a question year missing
    from the header chose column 0 whatever the period. Written from the rule on a made page."""
    rows = {c.label: c for c in page_candidates(TEN_Q, 3) if c.kind == "row"}
    answer, quote = _answer_of(rows[label], question_years(query), question_months(query))
    assert quote == value, answer


def test_period_words_choose_the_column_not_the_row():
    """A header line naming the question's period ("Twelve Months Ended June 30, ... Net Income per
    Share") must not outscore the row the question asks for: the period and date words weigh nothing."""
    assert question_months("How much was capex in the nine months ended September 30?") == 9
    assert question_months("What was revenue in the 52 weeks ended January 28, 2024?") == 12
    assert question_months("What was 3M's capex in FY2018?") is None
    # the period named first, when two are (review 12)
    assert question_months("Net income for the nine months ended September 30 versus the third quarter?") == 9
    # a header's periods do not carry over running text to a later table's years
    later = GROUPED.replace("June 30, June 30,\n2025 2024 2025 2024", "See the note below.\n") + (
        "BALANCE SHEETS\n2025 2024\nTotal assets 619,003 512,163\n"
    )
    assert {c.label: c for c in page_candidates(later, 1)}["Total assets"].months == []
    assert period_months("Three Months Ended Twelve Months Ended") == [3, 12]
    # a header of one period does not group the columns
    single = {c.label: c for c in page_candidates(GROUPED.replace(" Twelve Months Ended", ""), 1)}
    assert single["Net income"].months == []


def test_extractive_on_an_8k_with_quarter_and_year_columns(tmp_path):
    """The trial-12 questions on Microsoft's 8-K (its p. 9 income statement; its p. 6 reconciliation
    header "Twelve Months Ended June 30, ... Net Income per Share" had been the answer)."""
    from pageindex.tree import build_tree
    from tests.tree.conftest import filings_dir

    tree = build_tree(filings_dir() / "MICROSOFT_FY2025Q4_8-K-EARNINGS.pdf", cache_dir=tmp_path)
    question = "What was net income in the twelve months ended June 30, 2025?"
    year = retrieve(tree, question, retriever="extractive")
    assert year.answer == "Net income: $101,832 (12 months, 2025; in millions)" and year.sources[0].verified
    quarter = retrieve(tree, "What was total revenue in Q4 FY2025?", retriever="extractive")
    assert quarter.answer == "Total revenue: 76,441 (3 months, 2025; in millions, except per share amounts)"


def test_extractive_fails_when_nothing_matches(tree_3m):
    result = retrieve(tree_3m, "zzqx flurbo?", retriever="extractive")
    assert result.status == "fail" and result.pages_fetched == []
    with pytest.raises(RetrieverConfigError, match="unknown option 'model'"):
        retrieve(tree_3m, CAPEX_Q, retriever="extractive", model="x")


def test_extractive_on_a_second_filing(fb_tree):
    tree = fb_tree("AMCOR_2023Q4_EARNINGS")
    result = retrieve(tree, "What was Amcor's adjusted EPS?", retriever="extractive")
    assert result.status == "answer" and result.sources[0].verified is True
    assert Counter(result.extra["retrieved_pages"]).most_common(1)[0][1] == 1


def test_registering_the_retrievers_does_not_import_the_ranker() -> None:
    """`pageindex retrievers` lists every retriever; extractive built a word set with the ranker's
    tokenizer at import, which imported bm25s and with it numpy and scipy (a third of a second on
    every start that registers the retrievers: cli_startup `retrievers` 6.8x against a 4x target)."""
    import subprocess
    import sys

    probe = (
        "import sys; from pageindex.retrievers.base import available_retrievers; available_retrievers(); "
        "print(sorted(m for m in ('bm25s', 'scipy', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_tokens_are_words_of_any_script():
    """Tokens were ``[a-z0-9]+``: "dépositaire" was "d" + "positaire" (a query typed without the accent
    never matched), the "ﬁ" ligature PDFs print cut "financial" in two, and Chinese or Japanese text had no
    token at all. Accents and compatibility forms are folded; CJK runs are character bigrams."""
    assert tokenize("Le dépositaire du fonds") == tokenize("le depositaire du fonds") == [
        "le", "depositair", "du", "fond",
    ]  # fmt: skip
    assert tokenize("ﬁnancial statements") == tokenize("financial statements")
    assert tokenize("公司2023年营业收入为1,234亿元") == [
        "公司", "2023", "年营", "营业", "业收", "收入", "入为", "1234", "亿元",
    ]  # fmt: skip
    assert tokenize("税") == ["税"]  # a lone character is kept: it may be the whole word
    assert tokenize("Purchases of property, plant and equipment: 1,577") == [
        "purchas", "property", "plant", "equipment", "1577",
    ]  # fmt: skip


def test_extractive_finds_an_answer_written_in_french_or_chinese(tmp_path):
    """A filing in French (asked without its accents) or Chinese was 'Not found': no token matched."""
    import pymupdf

    from pageindex.tree import build_tree

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Annual report 2023", fontsize=18)
    page.insert_text((72, 110), "The company designs and sells widgets in many markets.", fontsize=10)
    page = doc.new_page()
    page.insert_text((72, 72), "Rapport annuel", fontsize=18)
    page.insert_text((72, 110), "Le dépositaire du fonds est CACEIS Bank, Paris.", fontsize=10)
    page = doc.new_page()
    page.insert_text((72, 72), "年度报告", fontsize=18, fontname="china-s")
    page.insert_text((72, 110), "公司2023年营业收入为1,234亿元，同比增长12%。", fontsize=10, fontname="china-s")  # noqa: E501
    doc.save(tmp_path / "intl.pdf")
    tree = build_tree(tmp_path / "intl.pdf", use_cache=False)
    french = retrieve(tree, "Who is the depositaire of the fund?", retriever="extractive")
    assert (french.status, french.sources[0].page) == ("answer", 2)
    assert "CACEIS Bank" in french.answer and french.sources[0].verified
    chinese = retrieve(tree, "营业收入是多少？", retriever="extractive")
    assert (chinese.status, chinese.sources[0].page) == ("answer", 3) and "1,234亿元" in chinese.answer


def test_a_superscript_is_no_part_of_the_word_it_is_printed_on():
    """Folding compatibility forms (NFKD) made a superscript part of its word: "Azure™" was "azureTM"
    (upper case: no query matched it, where it was "azure" before), and a footnote mark on a number,
    "1,577¹", was "15771", another number. Marks printed above or below the line are dropped."""
    assert tokenize("Azure™ revenue grew") == tokenize("azure revenue grew") == ["azur", "revenu", "grew"]
    assert tokenize("capital expenditure of 1,577¹ (2022: 1,373²)") == [
        "capital", "expenditur", "1577", "2022", "1373",
    ]  # fmt: skip
    assert tokenize("Servicemark℠ and Ｆｕｌｌ ＷＩＤＴＨ") == ["servicemark", "full", "width"]
    assert tokenize("ﬁnancial Société") == ["financial", "societ"]  # what the folding is for still holds


DECIMAL_COMMA = """Rapport de gestion
La part R a progressé de 12,34 % sur l'exercice, contre 4,06 % pour l'indicateur.
Performance de l'exercice 12,34% 13,56% 11,07%
Actif net en fin d'exercice 1 234 567,89 €
Produits sur actions 98.765,40 (1.234,50)
Nombre de parts 2.500 1.200
"""


def test_a_page_that_writes_decimals_with_a_comma_is_read_that_way():
    """"12,34%" was two figures, 12 and 34%, and "98.765,40" two more: a French page's numbers were read
    in the decimal-point convention. A page showing decimal commas (and not decimal points) is read in
    its own; one that does not, or shows only a list of footnote marks, is not. Written from the rule on
    a made page."""
    assert decimal_comma(DECIMAL_COMMA)
    rows = {c.label: c.values for c in page_candidates(DECIMAL_COMMA, 9) if c.kind == "row"}
    assert rows["Performance de l'exercice"] == ["12,34%", "13,56%", "11,07%"]  # as printed, one each
    assert rows["Actif net en fin d'exercice"] == ["1234567,89"]
    assert rows["Produits sur actions"] == ["98.765,40", "(1.234,50)"]
    assert rows["Nombre de parts"] == ["2.500", "1.200"]  # dots group thousands there
    english = "Net sales 1,234.56 1,100.25\nGross margin 12.5% 11.0%\nSee indicators 3,5 and 13 below.\n"
    assert not decimal_comma(english) and not decimal_comma("Fair Value1,2 and 1,4-dioxane, 31,1")
    rows = {c.label: c.values for c in page_candidates(english, 1) if c.kind == "row"}
    assert rows == {"Net sales": ["1,234.56", "1,100.25"], "Gross margin": ["12.5%", "11.0%"]}


CONTENTS = """Contents
Using This Prospectus 3
Europe Select Equity Fund 5
Global Core Equity Fund 9
Japan Strategic Value Fund 17
US Select Equity Fund 19
Risk Descriptions 52
"""


def test_a_table_of_contents_line_is_no_table_row(tmp_path):
    """"US Select Equity Fund 19" was a row whose figure is a page number, and the answer to when that
    fund was launched. A page whose rows mostly end in one small number, rising line after line, is a
    table of contents: those lines are no rows. A table of single figures that do not rise stays one.
    Written from the rule on made pages."""
    from pageindex.tree import build_tree
    from tests.tree.pdf_factory import make_pdf

    assert [c for c in page_candidates(CONTENTS, 2) if c.kind == "row"] == []
    stores = "Stores by region\nNorth 120\nSouth 45\nEast 300\nWest 80\nCentral 15\n"
    assert [c.label for c in page_candidates(stores, 4) if c.kind == "row"] == [
        "North", "South", "East", "West", "Central"]  # fmt: skip
    fund = ["US Select Equity Fund", "The fund seeks long-term capital growth from US companies.",
            "Sub-Fund launch date 05 Jul 1984.", "Dealing requests received before 14:30 CET are processed."]
    make_pdf(tmp_path / "funds.pdf", [CONTENTS.splitlines(), fund])
    tree = build_tree(tmp_path / "funds.pdf", use_cache=False)
    result = retrieve(tree, "When was the US Select Equity Fund launched?", retriever="extractive")
    assert (result.sources[0].page, "1984" in result.answer) == (2, True), result.answer


TWENTY_F = """For the year ended December 31,
% Change % Change
in NT$ in NT$
2021 2022 from 2021 2023 from 2022
NT$ NT$ NT$ US$
Net revenue 1,500,000 2,200,000 46.7% 2,100,000 68,000 (4.5)%
Gross margin percentage 51.0% 59.0% — 54.0% 54.0% —
CASH FLOWS
2021 2022 2023
NT$ NT$ NT$ US$
Net cash used in investing activities (800,000) (1,190,000) (906,000) (29,000)
"""


def test_a_convenience_translation_column_is_no_years_column():
    """A 20-F prints the latest year twice, in NT$ and translated into US$, beside "% Change from 2021"
    columns: "2021 2022 from 2021 2023 from 2022" over "NT$ NT$ NT$ US$" gave five header years (the
    ones changes are measured from among them) and four amounts no year lined up with, so the answer
    listed every figure and quoted the first. Years a change is measured from are no columns; the
    columns of the header's first currency are the years', another currency's no year's. Written
    from the rule on a made page."""
    rows = {c.label: c for c in page_candidates(TWENTY_F, 32) if c.kind == "row"}
    assert rows["Net revenue"].years == ["2021", "2022", "", "2023", "", ""]
    assert _answer_of(rows["Net revenue"], ["2023"]) == ("Net revenue: 2,100,000 (2023)", "2,100,000")
    assert _answer_of(rows["Net revenue"], ["2022"])[1] == "2,200,000"
    assert _answer_of(rows["Net revenue"], [])[1] == "2,100,000"  # the latest year, in NT$
    assert _answer_of(rows["Gross margin percentage"], ["2023"])[1] == "54.0%"
    cash = rows["Net cash used in investing activities"]
    assert (cash.years, _answer_of(cash, ["2023"])[1]) == (["2021", "2022", "2023", ""], "(906,000)")


UNITS = """CONSOLIDATED STATEMENTS OF INCOME
(In millions, except per share amounts)
2024 2023
Net sales 1,500 1,200
Gross margin 40.0% 38.0%
Diluted earnings per share $2.10 $1.80
Revenue was $1.5 billion, up 25% (in line with guidance).
OTHER DATA
2024 2023
Stores 410 395
BALANCE SHEET
million yen
As of March 31, 2024 As of September 30, 2024
Inventories 204,183 295,347
"""


def test_an_answer_states_the_unit_its_tables_header_states():
    """"Inventories: 295,347 (Sep 2024)" never said million yen, nor "Net sales: 1,500 (2024)" in
    millions: the unit a table's header states ("(In millions, except per share amounts)", "million yen",
    "(Millions of JPY)", "€ thousands") is said after the column, where it adds no number to the answer;
    a percentage states none, nor a later table under a header of its own that states none, nor a
    figure's own scale in running text. Written from the rule on a made page."""
    rows = {c.label: c for c in page_candidates(UNITS, 4) if c.kind == "row"}
    assert _answer_of(rows["Net sales"], ["2024"]) == (
        "Net sales: 1,500 (2024; in millions, except per share amounts)", "1,500")
    assert _answer_of(rows["Gross margin"], ["2024"])[0] == "Gross margin: 40.0% (2024)"
    eps = rows["Diluted earnings per share"]
    assert _answer_of(eps, ["2024"])[0] == "Diluted earnings per share: $2.10 (2024)"
    assert rows["Stores"].unit == ""  # a new table whose header states no unit
    assert _answer_of(rows["Inventories"], [], dated=9) == (
        "Inventories: 295,347 (Sep 2024; million yen)", "295,347")
    assert [unit_of(line) for line in ("(Millions of JPY)", "€ thousands", "2Q23 ($ in millions; except EPS)",
            "Revenue was $76.4 billion", "(up 27% to $46.7 billion)", "(1) In thousands.")] == [
        "millions of JPY", "€ thousands", "$ in millions; except EPS", "", "", ""]  # fmt: skip


WRAPPED = """Revenue by Reportable Segments
($ in millions)
2024 2023
Compute & Networking 10,402 3,907
Graphics 2,486 2,797
Compute & Networking segment. There were no customers with 10% or more of revenue in fiscal year
2024
The cash balance was fully drawn down during the period ended December 31, 2022
Director Since: 1993
"""


def test_a_sentence_wrapped_after_a_date_is_no_row():
    """"... no customers with 10% or more of total revenue for the second quarter and first half of fiscal
    year" over "2023" was a row whose figure is 2023, and it outscored the segment's revenue row on the
    same page. A line of six words or more whose only figures are a date's year and day is prose; a short
    label with a year ("Director Since: 1993") stays a row. Written from the rule on a made page."""
    candidates = page_candidates(WRAPPED, 29)
    rows = {c.label: c.values for c in candidates if c.kind == "row"}
    assert rows == {"Compute & Networking": ["10,402", "3,907"], "Graphics": ["2,486", "2,797"],
                    "Director Since:": ["1993"]}  # fmt: skip
    sentences = [c.text for c in candidates if c.kind == "sentence"]
    assert any(s.startswith("There were no customers") for s in sentences), sentences
    assert any(s.endswith("ended December 31, 2022") for s in sentences), sentences
    # two years after six words are a header's columns, not the end of a sentence (the rule above read
    # Walmart's "(Amounts in millions, except per share data) 2025 2024" as prose: found on holdout2)
    header = "(Amounts in millions, except per share data) 2025 2024\nOperating income 7,135 6,841\n"
    rows = {c.label: c for c in page_candidates(header, 1) if c.kind == "row"}
    assert _answer_of(rows["Operating income"], ["2024"])[1] == "6,841"


MARKS = """Fees Billed by the Independent Registered Public Accounting Firm
2024 2023
Audit Fees (1) $6,686,412 $6,858,279
Tax Fees (3) 1,164,399 1,189,263
Other (1) (4)
STATEMENTS OF PROFIT OR LOSS
Notes 2021 2022 2023
NT$ NT$ NT$ US$
NET REVENUE 6, 22, 34 $ 1,587,415.0 $ 2,263,891.3 $ 2,161,735.8 $ 70,598.8
Interest income 23 5,708.8 22,422.2 60,293.9 1,969.1
"""


def test_footnote_marks_and_note_references_before_the_figures_are_no_figures():
    """"Audit Fees (1) $6,686,412 $6,858,279" under "2024 2023" had three figures for two years, so no
    year lined up and the answer quoted "(1)"; a 20-F's "Notes" column ("NET REVENUE 6, 22, 34 ...") did
    the same. Leading small numbers that keep the figures from lining up with the header's columns, and
    without which they do, are no figures (nor words of the label). A row that lines up as it is keeps its
    figures. Written from the rule on a made page."""
    rows = {c.label: c for c in page_candidates(MARKS, 68) if c.kind == "row"}
    assert (rows["Audit Fees"].values, rows["Audit Fees"].years) == (
        ["$6,686,412", "$6,858,279"], ["2024", "2023"])
    assert _answer_of(rows["Tax Fees"], ["2023"])[1] == "1,189,263"
    assert rows["Other"].values == ["(1)", "(4)"]  # lined up already: two figures, two years
    assert _answer_of(rows["NET REVENUE"], ["2023"])[1] == "$2,161,735.8"
    assert _answer_of(rows["Interest income"], ["2022"])[1] == "22,422.2"


def test_a_header_of_years_ending_its_line_is_no_row():
    """"Fiscal 2024 Fiscal 2023" ends in a figure, so it was read as a row ("Fiscal 2024 Fiscal: 2023") and
    the fee rows below it had no year columns. A line whose only figures are two or more years, with three
    words or fewer beside them, is the header. Written from the rule on a made page."""
    page = "Fees\nFiscal 2024 Fiscal 2023\nAudit Fees 6,686,412 6,858,279\nTax Fees 1,164,399 1,189,263\n"
    rows = {c.label: c for c in page_candidates(page, 68) if c.kind == "row"}
    assert list(rows) == ["Audit Fees", "Tax Fees"]
    assert _answer_of(rows["Tax Fees"], ["2023"]) == ("Tax Fees: 1,189,263 (2023)", "1,189,263")
