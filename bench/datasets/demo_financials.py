"""Numbers for the demo filings: three synthetic companies whose statements add up.

Everything is in USD millions (except per-share data, shares in millions and employees).
Drawn from ``random.Random`` seeded by ``(seed, ticker)``, so a seed gives the same numbers
on every machine.
"""

from __future__ import annotations

import random

from pydantic import BaseModel, Field

Years = dict[int, int]  # fiscal year -> amount


class Profile(BaseModel):
    """Who the company is: names, places, segments. Fixed text, not random."""

    doc_id: str
    name: str
    short: str
    ticker: str
    state: str
    hq: str
    sector: str
    fiscal_year: int
    segments: list[str]
    business: str  # one sentence: what it does
    f_pages: bool = False  # financial statements on F-1.. pages
    outline: bool = False  # write PDF bookmarks


PROFILES: list[Profile] = [
    Profile(
        doc_id="NORTHWIND_2023_10K",
        name="Northwind Industrial Corporation",
        short="Northwind",
        ticker="NWIC",
        state="Delaware",
        hq="Columbus, Ohio",
        sector="Industrials",
        fiscal_year=2023,
        segments=["Motion Systems", "Fluid Controls", "Aftermarket Services"],
        business="designs and makes motion-control components, pumps and valves for industrial customers",
        outline=True,
    ),
    Profile(
        doc_id="BLUEFIN_2022_10K",
        name="Bluefin Software, Inc.",
        short="Bluefin",
        ticker="BFSW",
        state="Washington",
        hq="Bellevue, Washington",
        sector="Information Technology",
        fiscal_year=2022,
        segments=["Cloud Subscriptions", "Professional Services"],
        business="sells cloud software that plans and tracks field-service work for utilities and telecoms",
    ),
    Profile(
        doc_id="GRANITEPEAK_2023_10K",
        name="Granite Peak Retail Holdings, Inc.",
        short="Granite Peak",
        ticker="GPRH",
        state="Colorado",
        hq="Denver, Colorado",
        sector="Consumer Discretionary",
        fiscal_year=2023,
        segments=["Stores", "Digital", "Wholesale"],
        business="operates outdoor-equipment stores and an online shop in the Mountain West",
        f_pages=True,
    ),
]

GROSS_MARGIN_DRIVERS_UP = [
    "favorable product mix",
    "lower freight and logistics costs",
    "pricing actions taken early in the year",
    "higher factory utilization",
    "productivity savings",
]
GROSS_MARGIN_DRIVERS_DOWN = [
    "higher raw-material costs",
    "unfavorable product mix",
    "promotional markdowns",
    "higher warranty costs",
    "wage inflation",
]


class Financials(BaseModel):
    """Statement lines by fiscal year (USD millions unless named otherwise)."""

    years: list[int]  # [Y, Y-1, Y-2], newest first
    income: dict[str, Years] = Field(default_factory=dict)
    balance: dict[str, Years] = Field(default_factory=dict)  # Y and Y-1 only
    cash: dict[str, Years] = Field(default_factory=dict)
    segment_sales: dict[str, Years] = Field(default_factory=dict)
    eps_basic: dict[int, float] = Field(default_factory=dict)
    eps_diluted: dict[int, float] = Field(default_factory=dict)
    ppe_detail: dict[str, Years] = Field(default_factory=dict)  # Y and Y-1
    debt_maturities: dict[str, int] = Field(default_factory=dict)  # "2024" ... "Thereafter"
    tax_rate: dict[int, float] = Field(default_factory=dict)  # effective rate, percent
    employees: int = 0
    margin_drivers: list[str] = Field(default_factory=list)
    dividends_per_share: float = 0.0
    rate_sensitivity: int = 0  # $M added to interest expense by +100 bp on variable-rate debt


def _r(rng: random.Random, low: float, high: float) -> float:
    return rng.uniform(low, high)


def make_financials(profile: Profile, seed: int) -> Financials:
    rng = random.Random(f"{seed}:{profile.ticker}")
    y = profile.fiscal_year
    years = [y, y - 1, y - 2]
    fin = Financials(years=years)
    inc: dict[str, Years] = {
        k: {}
        for k in (
            "revenue",
            "cost",
            "gross",
            "sga",
            "rnd",
            "operating",
            "interest",
            "other",
            "pretax",
            "tax",
            "net",
            "shares_basic",
            "shares_diluted",
        )
    }
    base = rng.randrange(2_000, 30_000)
    growth = [_r(rng, -0.06, 0.14) for _ in years]
    margin0 = _r(rng, 0.28, 0.62)
    shares_base = _r(rng, 80, 600)
    revenue = base
    for i, year in enumerate(reversed(years)):  # oldest first
        revenue = round(revenue * (1 + growth[i]))
        margin = margin0 + _r(rng, -0.03, 0.03)
        cost = round(revenue * (1 - margin))
        sga = round(revenue * _r(rng, 0.12, 0.22))
        rnd = round(revenue * _r(rng, 0.02, 0.09))
        operating = revenue - cost - sga - rnd
        interest = round(revenue * _r(rng, 0.004, 0.015))
        other = round(revenue * _r(rng, -0.006, 0.006))
        pretax = operating - interest + other
        tax = round(pretax * _r(rng, 0.17, 0.26))
        shares = shares_base * (1 - 0.01 * i)
        values = {
            "revenue": revenue,
            "cost": cost,
            "gross": revenue - cost,
            "sga": sga,
            "rnd": rnd,
            "operating": operating,
            "interest": interest,
            "other": other,
            "pretax": pretax,
            "tax": tax,
            "net": pretax - tax,
        }
        for key, value in values.items():
            inc[key][year] = value
        inc["shares_basic"][year] = round(shares)
        inc["shares_diluted"][year] = round(shares * 1.012)
        fin.eps_basic[year] = round((pretax - tax) / round(shares), 2)
        fin.eps_diluted[year] = round((pretax - tax) / round(shares * 1.012), 2)
        fin.tax_rate[year] = round(100 * tax / pretax, 1)
    fin.income = inc

    # Segment sales split the revenue; the last segment takes the rounding.
    weights = [_r(rng, 0.5, 1.5) for _ in profile.segments]
    for year in years:
        parts = [round(inc["revenue"][year] * w / sum(weights)) for w in weights[:-1]]
        parts.append(inc["revenue"][year] - sum(parts))
        for seg, amount in zip(profile.segments, parts, strict=True):
            fin.segment_sales.setdefault(seg, {})[year] = amount

    cf: dict[str, Years] = {}
    cash_end = {y - 3: round(base * _r(rng, 0.05, 0.15))}
    for year in reversed(years):
        revenue = inc["revenue"][year]
        lines = {
            "net": inc["net"][year],
            "da": round(revenue * _r(rng, 0.03, 0.06)),
            "sbc": round(revenue * _r(rng, 0.005, 0.03)),
            "deferred": round(revenue * _r(rng, -0.01, 0.01)),
            "receivables": -round(revenue * _r(rng, 0.0, 0.02)),
            "inventories": round(revenue * _r(rng, -0.02, 0.01)),
            "payables": round(revenue * _r(rng, -0.005, 0.015)),
            "other_operating": round(revenue * _r(rng, -0.01, 0.01)),
        }
        lines["operating"] = sum(lines.values())
        lines["capex"] = -round(revenue * _r(rng, 0.03, 0.07))
        lines["acquisitions"] = -round(revenue * _r(rng, 0.0, 0.05)) if rng.random() < 0.5 else 0
        lines["investments"] = round(revenue * _r(rng, -0.01, 0.01))
        lines["investing"] = lines["capex"] + lines["acquisitions"] + lines["investments"]
        lines["debt_issued"] = round(revenue * _r(rng, 0.0, 0.04))
        lines["debt_repaid"] = -round(revenue * _r(rng, 0.01, 0.04))
        lines["dividends"] = -round(inc["net"][year] * _r(rng, 0.15, 0.4))
        lines["repurchases"] = -round(inc["net"][year] * _r(rng, 0.1, 0.5))
        lines["financing"] = (
            lines["debt_issued"] + lines["debt_repaid"] + lines["dividends"] + lines["repurchases"]
        )
        lines["change"] = lines["operating"] + lines["investing"] + lines["financing"]
        if cash_end[year - 1] + lines["change"] < revenue * 0.03:  # keep cash positive
            lines["repurchases"] += round(revenue * 0.03) - (cash_end[year - 1] + lines["change"])
            lines["repurchases"] = min(lines["repurchases"], 0)
            lines["financing"] = (
                lines["debt_issued"] + lines["debt_repaid"] + lines["dividends"] + lines["repurchases"]
            )
            lines["change"] = lines["operating"] + lines["investing"] + lines["financing"]
        lines["cash_begin"] = cash_end[year - 1]
        lines["cash_end"] = cash_end[year - 1] + lines["change"]
        cash_end[year] = lines["cash_end"]
        for key, value in lines.items():
            cf.setdefault(key, {})[year] = value
    fin.cash = cf

    bs: dict[str, Years] = {}
    equity_prev: dict[str, int] = {}
    for year in (y - 1, y):
        revenue = inc["revenue"][year]
        a = {
            "cash": cash_end[year],
            "receivables": round(revenue * _r(rng, 0.08, 0.16)),
            "inventories": round(revenue * _r(rng, 0.05, 0.18)),
            "prepaid": round(revenue * _r(rng, 0.01, 0.04)),
        }
        a["current_assets"] = sum(a.values())
        a["ppe"] = round(revenue * _r(rng, 0.18, 0.4))
        a["goodwill"] = round(revenue * _r(rng, 0.1, 0.3))
        a["intangibles"] = round(revenue * _r(rng, 0.03, 0.1))
        a["other_assets"] = round(revenue * _r(rng, 0.02, 0.06))
        liab = {
            "payables": round(revenue * _r(rng, 0.05, 0.1)),
            "accrued": round(revenue * _r(rng, 0.04, 0.08)),
            "current_debt": round(revenue * _r(rng, 0.01, 0.03)),
        }
        liab["current_liabilities"] = sum(liab.values())
        liab["long_term_debt"] = round(revenue * _r(rng, 0.15, 0.3))
        if not equity_prev:
            eq = {
                "apic": round(revenue * _r(rng, 0.15, 0.3)),
                "retained": round(revenue * _r(rng, 0.2, 0.4)),
                "aoci": -round(revenue * _r(rng, 0.005, 0.02)),
                "treasury": -round(revenue * _r(rng, 0.02, 0.08)),
            }
        else:
            eq = {
                "apic": equity_prev["apic"] + cf["sbc"][year],
                "retained": equity_prev["retained"] + inc["net"][year] + cf["dividends"][year],
                "aoci": -round(revenue * _r(rng, 0.005, 0.02)),
                "treasury": equity_prev["treasury"] + cf["repurchases"][year],
            }
        equity_prev = eq
        eq_total = sum(eq.values())
        total_assets = a["current_assets"] + a["ppe"] + a["goodwill"] + a["intangibles"] + a["other_assets"]
        other_liab = total_assets - eq_total - liab["current_liabilities"] - liab["long_term_debt"]
        floor = round(revenue * 0.02)
        if other_liab < floor:  # grow other assets until the plug is a sensible liability
            a["other_assets"] += floor - other_liab
            total_assets += floor - other_liab
            other_liab = floor
        liab["other_liabilities"] = other_liab
        liab["total_liabilities"] = liab["current_liabilities"] + liab["long_term_debt"] + other_liab
        a["total_assets"] = total_assets
        rows = {**a, **liab, **eq, "total_equity": eq_total, "total_liabilities_equity": total_assets}
        for key, value in rows.items():
            bs.setdefault(key, {})[year] = value
    fin.balance = bs

    for year in (y - 1, y):
        ppe = bs["ppe"][year]
        land = round(ppe * _r(rng, 0.05, 0.12))
        buildings = round(ppe * _r(rng, 0.35, 0.5))
        equipment = round(ppe * _r(rng, 0.7, 0.9))
        construction = round(ppe * _r(rng, 0.03, 0.08))
        gross = land + buildings + equipment + construction
        fin.ppe_detail.setdefault("land", {})[year] = land
        fin.ppe_detail.setdefault("buildings", {})[year] = buildings
        fin.ppe_detail.setdefault("equipment", {})[year] = equipment
        fin.ppe_detail.setdefault("construction", {})[year] = construction
        fin.ppe_detail.setdefault("gross", {})[year] = gross
        fin.ppe_detail.setdefault("depreciation", {})[year] = -(gross - ppe)
        fin.ppe_detail.setdefault("net", {})[year] = ppe

    total_debt = bs["current_debt"][y] + bs["long_term_debt"][y]
    shares = [_r(rng, 0.5, 1.5) for _ in range(6)]
    shares[0] = 0.0  # current portion is given on the balance sheet
    amounts = [round(bs["long_term_debt"][y] * s / sum(shares)) for s in shares[1:]]
    amounts[-1] = bs["long_term_debt"][y] - sum(amounts[:-1])
    labels = [str(y + 1), str(y + 2), str(y + 3), str(y + 4), str(y + 5), "Thereafter"]
    fin.debt_maturities = {labels[0]: bs["current_debt"][y]} | dict(zip(labels[1:], amounts, strict=True))
    assert sum(fin.debt_maturities.values()) == total_debt

    fin.employees = round(inc["revenue"][y] / _r(rng, 0.25, 0.6) / 10) * 10
    up = gross_margin(fin, y) >= gross_margin(fin, y - 1)
    pool = GROSS_MARGIN_DRIVERS_UP if up else GROSS_MARGIN_DRIVERS_DOWN
    fin.margin_drivers = rng.sample(pool, 2)
    fin.dividends_per_share = round(-cf["dividends"][y] / inc["shares_basic"][y], 2)
    fin.rate_sensitivity = max(1, round(total_debt * _r(rng, 0.2, 0.5) / 100))
    return fin


def gross_margin(fin: Financials, year: int) -> float:
    """Gross profit / revenue, in percent, unrounded."""
    return 100 * fin.income["gross"][year] / fin.income["revenue"][year]
