"""Quoted numbers: the associations (§4.3, A.6, App. I)."""

from __future__ import annotations

from declinecraft.paper import number_sources
from declinecraft.paper.number_spec import Number

NUMBERS: list[Number] = [
    # --- associations (§4.3, A.6, App. I)
    Number(
        "NOpenWeight",
        "open-weight models in the size associations",
        number_sources.association("car_total_params", "n"),
        "int",
        "n_models_open_weight",
    ),
    Number(
        "RhoCARTotal",
        "Spearman rho, CAR vs total parameters",
        number_sources.association("car_total_params"),
        "rho",
        "rho_car_total_params",
    ),
    Number(
        "PCARTotal",
        "p, CAR vs total parameters",
        number_sources.association("car_total_params", "p"),
        "p",
        "p_car_total_params",
    ),
    Number(
        "RhoCARActive",
        "Spearman rho, CAR vs active parameters",
        number_sources.association("car_active_params"),
        "rho",
        "rho_car_active_params",
    ),
    Number(
        "PCARActive",
        "p, CAR vs active parameters",
        number_sources.association("car_active_params", "p"),
        "p",
        "p_car_active_params",
    ),
    Number(
        "NReleaseModels", "models with a release month", number_sources.association("car_release_month", "n"), "int"
    ),
    Number(
        "RhoCARRelease",
        "Spearman rho, CAR vs release month",
        number_sources.association("car_release_month"),
        "rho",
        "rho_car_release_month",
    ),
    Number(
        "PCARRelease",
        "p, CAR vs release month",
        number_sources.association("car_release_month", "p"),
        "p",
        "p_car_release_month",
    ),
    Number(
        "NActive",
        "models in the CAR-active parameters association",
        number_sources.association("car_active_params", "n"),
        "int",
    ),
    Number(
        "NAccTotal",
        "models in the accuracy-total parameters association",
        number_sources.association("accuracy_total_params", "n"),
        "int",
    ),
    Number(
        "NReleaseFamilies",
        "families in the best-per-family release association",
        number_sources.association("car_release_month_best_per_family", "n"),
        "int",
    ),
    Number(
        "NCARAcc",
        "configurations in the CAR-accuracy association",
        number_sources.association("car_accuracy", "n"),
        "int",
    ),
    Number(
        "NPartial",
        "configurations in the partial CAR-accuracy association",
        number_sources.association("car_accuracy_partial_release", "n"),
        "int",
    ),
    Number(
        "RhoCARReleaseBest",
        "rho, best CAR per family vs release",
        number_sources.association("car_release_month_best_per_family"),
        "rho",
        "rho_car_release_month_best_per_family",
    ),
    Number(
        "PCARReleaseBest",
        "p, best CAR per family vs release",
        number_sources.association("car_release_month_best_per_family", "p"),
        "p",
        "p_car_release_month_best_per_family",
    ),
    Number(
        "RhoAccTotal",
        "rho, accuracy vs total parameters",
        number_sources.association("accuracy_total_params"),
        "rho",
        "rho_accuracy_total_params",
    ),
    Number(
        "PAccTotal",
        "p, accuracy vs total parameters",
        number_sources.association("accuracy_total_params", "p"),
        "p",
        "p_accuracy_total_params",
    ),
    Number(
        "RhoCARAcc",
        "rho, CAR vs accuracy (configurations)",
        number_sources.association("car_accuracy"),
        "rho",
        "rho_car_accuracy_single_shot",
    ),
    Number(
        "PCARAcc",
        "p, CAR vs accuracy",
        number_sources.association("car_accuracy", "p"),
        "p",
        "p_car_accuracy_single_shot",
    ),
    Number(
        "RhoCARAccAtt",
        "rho, CAR vs accuracy when attempted",
        number_sources.association("car_accuracy_when_attempted"),
        "rho",
        "rho_car_accuracy_when_attempted",
    ),
    Number(
        "PCARAccAtt",
        "p, CAR vs accuracy when attempted",
        number_sources.association("car_accuracy_when_attempted", "p"),
        "p",
        "p_car_accuracy_when_attempted",
    ),
    Number(
        "RhoReleaseAcc",
        "rho, release month vs accuracy (configurations)",
        number_sources.association("release_month_accuracy"),
        "rho",
        "rho_release_month_accuracy_configs",
    ),
    Number(
        "RhoReleaseCAR",
        "rho, release month vs CAR (configurations)",
        number_sources.association("release_month_car"),
        "rho",
        "rho_release_month_car_configs",
    ),
    Number(
        "RhoPartial",
        "partial rank association CAR-accuracy | release",
        number_sources.association("car_accuracy_partial_release"),
        "rho",
        "rho_car_accuracy_partial_release",
    ),
    Number(
        "PPartial",
        "p of the partial association",
        number_sources.association("car_accuracy_partial_release", "p"),
        "p",
        "p_car_accuracy_partial_release",
    ),
    Number(
        "RhoLenRelease",
        "rho, lenient CAR vs release month",
        number_sources.association("car_lenient_release_month"),
        "rho",
        "rho_lenient_car_release_month",
    ),
    Number(
        "PLenRelease",
        "p, lenient CAR vs release month",
        number_sources.association("car_lenient_release_month", "p"),
        "p",
        "p_lenient_car_release_month",
    ),
]
