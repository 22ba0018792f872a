"""`archiver verify`, second round (issue 29, item 8): weight "none" is the spec's sentinel for an unweighted
base, and a scale note names the factor, calling it percent against fraction only where the numbers are
shares."""

from __future__ import annotations

import pytest

from archiver.verify.compare import ClaimValue, differences
from tests.test_verify import UNWEIGHTED, cite, ingest, layer, verdicts  # noqa: F401  (the fixture `layer`)


@pytest.mark.slow
def test_weight_none_is_an_unweighted_base(archive, write, layer):  # noqa: F811
    ingest(archive, write, {"none": (UNWEIGHTED, cite(weight="none")), "None": (UNWEIGHTED, cite(weight="None"))})
    assert verdicts(archive.verify()) == {"none": ("reproduced", None), "None": ("reproduced", None)}


@pytest.mark.parametrize(
    ("literal", "rerun", "note"),
    [
        ("0.46", 45.999, "scale: claimed as fraction, data gives percent"),
        ("46", 0.4601, "scale: claimed as percent, data gives fraction"),
        ("1250", 125000, "scale: the data gives 100 times the claimed value"),  # euros against cents
        ("125000", 1250, "scale: the data gives 1/100 of the claimed value"),
        ("4.2", 4200, "scale: the data gives 1,000 times the claimed value"),
        ("4200", 4.2, "scale: the data gives 1/1,000 of the claimed value"),
    ],
)
def test_a_scale_note_names_the_factor_and_no_unit_the_data_does_not_state(literal, rerun, note):
    (found,) = differences([ClaimValue("/v", literal, float(literal))], {"v": rerun})
    assert found["note"] == note
