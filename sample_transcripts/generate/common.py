"""Shared, SDK-free definitions for the sample-transcript generators.

Imported by make_samples_13.py (a2a-sdk 1.3.0 venv), make_samples_03.py
(a2a-sdk 0.3.26 venv) and make_legacy.py (any Python).  Nothing here parses
the produced files: the manifest fragments are written from what the
scenarios put in.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

CIT_MT = "application/vnd.upperhand.citations+json"
EXT_URI = "https://standards.upperhandai.com/ext/citations/v1"

HERE = Path(__file__).resolve().parent
OUT = Path(os.environ.get("SAMPLES_OUT", HERE.parent))  # sample_transcripts/, or where a test has them made
FRAG_DIR = Path(os.environ.get("SAMPLES_FRAGMENTS", "/tmp/sample-transcripts-fragments"))

# Fixed timestamps so re-runs are stable where the SDK lets us set them.
TS = {
    "submitted": "2026-04-21T09:00:00Z",
    "working": "2026-04-21T09:00:01Z",
    "completed": "2026-04-21T09:00:03Z",
}


def citation(
    study, period, base_name, n, table, column, function, *, fielded=None, weight="main_weight", warnings=None
):
    c = {"study": study, "period": period}
    if fielded:
        c["fielded"] = fielded
    c["base"] = {"name": base_name, "n": n}
    if weight:
        c["weight"] = weight
    c["source"] = {"table": table, "column": column, "function": function}
    if warnings:
        c["warnings"] = list(warnings)
    return c


# --- citations used by the scenarios -------------------------------------
CIT_VERSANT_W6 = citation(
    "Versant Mega Tracker",
    "W6 (April 2026)",
    "Adults 18-74, aware of brand",
    4210,
    "versant_flat",
    "s14r5",
    "extractFunnel",
    fielded="2026-04-02/2026-04-19",
    warnings=["Base under 100 in the 65-74 cell"],
)
CIT_VERSANT_W5 = citation(
    "Versant Mega Tracker",
    "W5 (March 2026)",
    "Adults 18-74",
    3980,
    "versant_flat",
    "s12r2",
    "extractShare",
    fielded="2026-03-03/2026-03-20",
)
CIT_VERSANT_W6_CONSIDER = citation(
    "Versant Mega Tracker",
    "W6 (April 2026)",
    "Adults 18-74, aware of brand",
    4210,
    "versant_flat",
    "s15r1",
    "extractFunnel",
    fielded="2026-04-02/2026-04-19",
)
CIT_SANTE = citation(
    "Étude Santé 2026",
    "Vague 2 (mai 2026)",
    "Adultes 18 ans et plus, France métropolitaine",
    1875,
    "sante_panel",
    "q7_mutuelle",
    "extractDistribution",
    fielded="2026-05-04/2026-05-22",
    weight="poids_redresse",
)
CIT_SANTE_SMALL = citation(
    "Étude Santé 2026",
    "Vague 2 (mai 2026)",
    "Médecins généralistes, Corse",
    24,
    "sante_panel",
    "q11_teleconsult",
    "extractShare",
    fielded="2026-05-04/2026-05-22",
    weight="unweighted",
    warnings=["Base under 30: indicative only"],
)
CIT_BHM = citation(
    "Brand Health Monitor",
    "Wave 14",
    "Category buyers, last 3 months",
    940,
    "bhm_wide",
    "nps_r3",
    "extractNPS",
    fielded="2026-02-09/2026-02-27",
)
CIT_BHM_NOFUNC = copy.deepcopy(CIT_BHM)
CIT_BHM_NOFUNC["source"] = {"table": "bhm_wide", "column": "nps_r4", "function": None}
CIT_NORTHWIND = citation(
    "Northwind Retail Pulse",
    "2026-Q1",
    "Loyalty-card shoppers",
    612,
    "nw_pulse_long",
    "basket_size",
    "extractMean",
    weight="unweighted",
)
CIT_NORTHWIND_Q4 = citation(
    "Northwind Retail Pulse",
    "2025-Q4",
    "Loyalty-card shoppers",
    587,
    "nw_pulse_long",
    "basket_size",
    "extractMean",
    weight="unweighted",
)
CIT_NORTHWIND_ZERO = citation(
    "Northwind Retail Pulse",
    "2026-Q1",
    "Loyalty-card shoppers, new stores",
    0,
    "nw_pulse_long",
    "visits_pw",
    "extractMean",
    weight="unweighted",
)
CIT_NORTHWIND_CHANNEL = citation(
    "Northwind Retail Pulse",
    "2026-Q1",
    "Loyalty-card shoppers",
    612,
    "nw_pulse_long",
    "channel",
    "extractShare",
    weight="unweighted",
)
CIT_NORTHWIND_LEGACY = citation(
    "Northwind Retail Pulse",
    "2025-Q3",
    "Loyalty-card shoppers",
    559,
    "nw_pulse_long",
    "basket_size",
    "extractMean",
    weight="unweighted",
)

# --- quantitative payloads -------------------------------------------------
Q_FUNNEL_W6 = {
    "segments": [
        {"name": "18-34", "share": 0.42, "n": 1210},
        {"name": "35-54", "share": 0.37, "n": 1655},
        {"name": "55-74", "share": 0.21, "n": 1345},
    ],
    "total": 4210,
}
Q_SHARE_W5 = {
    "metric": "brand_share",
    "segments": [{"name": "Versant", "share": 0.31}, {"name": "Others", "share": 0.69}],
    "total": 3980,
}
Q_CONSIDER_W6 = {"metric": "consideration", "value": 0.58, "ci95": [0.565, 0.595], "total": 4210}
Q_SANTE = {
    "question": "Couverture complémentaire santé",
    "distribution": [
        {"label": "Mutuelle individuelle", "share": 0.46},
        {"label": "Contrat d'entreprise", "share": 0.41},
        {"label": "Aucune", "share": 0.13},
    ],
    "total": 1875,
}
Q_SANTE_SMALL = {"question": "Téléconsultation au moins une fois par mois", "share": 0.29, "total": 24}
Q_SANTE_REGION = {
    "regions": [
        {"name": "Île-de-France", "share": 0.52, "n": 402},
        {"name": "Auvergne-Rhône-Alpes", "share": 0.47, "n": 233},
    ]
}
Q_NPS = {"nps": 31, "promoters": 0.49, "detractors": 0.18, "total": 940}
Q_NPS_R4 = {"nps": 27, "promoters": 0.45, "detractors": 0.18}
Q_BASKET = {"mean_basket_eur": 42.7, "median_basket_eur": 35.0, "total": 612}
Q_BASKET_Q4 = {"mean_basket_eur": 44.1, "median_basket_eur": 36.5, "total": 587}
Q_VISITS = {"mean_visits_per_week": 1.8, "total": 0}
Q_CHANNEL = {
    "channels": [
        {"name": "store", "share": 0.71},
        {"name": "click_and_collect", "share": 0.18},
        {"name": "delivery", "share": 0.11},
    ]
}
Q_UNCITED = {
    "metric": "awareness_trend",
    "waves": [{"wave": "W4", "value": 0.61}, {"wave": "W5", "value": 0.63}, {"wave": "W6", "value": 0.66}],
}
Q_BASKET_LEGACY = {"mean_basket_eur": 41.2, "total": 559}


def numeric_leaves(obj) -> int:
    """Counts numeric leaves (int/float, not bool) of OUR OWN payload dicts."""
    if isinstance(obj, bool):
        return 0
    if isinstance(obj, (int, float)):
        return 1
    if isinstance(obj, dict):
        return sum(numeric_leaves(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(numeric_leaves(v) for v in obj)
    return 0


def cit_summary(c, *, valid=True, inferred=False, base_n=None):
    return {
        "study": c["study"],
        "period": c["period"],
        "column": c["source"]["column"],
        "table": c["source"]["table"],
        "function": c["source"]["function"],
        "base_n": c["base"]["n"] if base_n is None else base_n,
        "valid": valid,
        "inferred": inferred,
    }


def copy_entry(path, state, terminal, citations, data_payloads, text_parts):
    """data_payloads: the DISTINCT non-citation data payloads present in the copy."""
    return {
        "path": path,
        "state": state,
        "terminal": terminal,
        "citations": citations,
        "claims": sum(numeric_leaves(d) for d in data_payloads),
        "data_parts": len(data_payloads),
        "text_parts": text_parts,
    }


class Fragment:
    """Accumulates manifest entries for one generator run."""

    def __init__(self, name):
        self.name = name
        self.files = []
        self.agents = []
        self.results = {}
        self.error_responses = []
        self.planted = []

    def file(self, path, container, dialects, made_by, records, description, gzip=False):
        self.files.append(
            {
                "path": path,
                "container": container,
                "gzip": gzip,
                "dialects": dialects,
                "made_by": made_by,
                "records": records,
                "description": description,
            }
        )

    def agent(self, name, card, declares_extension, lists_media_type):
        self.agents.append(
            {"name": name, "card": card, "declares_extension": declares_extension, "lists_media_type": lists_media_type}
        )

    def result(self, key, agent, task_id=None, context_id=None, message_id=None):
        if key not in self.results:
            r = {"key": key, "task_id": task_id, "context_id": context_id}
            if message_id is not None:
                r["message_id"] = message_id
            r["agent"] = agent
            r["copies"] = []
            self.results[key] = r
        return self.results[key]

    def add_copy(self, key, agent, copy_, task_id=None, context_id=None, message_id=None):
        self.result(key, agent, task_id, context_id, message_id)["copies"].append(copy_)

    def error(self, path, count):
        self.error_responses.append({"path": path, "count": count})

    def plant(self, rule, severity, key, path, what):
        self.planted.append({"rule": rule, "severity": severity, "key": key, "path": path, "what": what})

    def write(self):
        FRAG_DIR.mkdir(parents=True, exist_ok=True)
        doc = {
            "files": self.files,
            "agents": self.agents,
            "results": list(self.results.values()),
            "error_responses": self.error_responses,
            "planted": self.planted,
        }
        (FRAG_DIR / f"{self.name}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
