"""A decomposed question answered in one process: plan, answer each part, combine.

The site runs each part as a question of its own, on the workers (``qa/services/decomposition.py``);
this is the same plan and the same combination over one in-memory pipeline, for the
experiments in ``bench/`` that have no database.
"""

from __future__ import annotations

from dataclasses import replace

from qa.pipeline.combine import DecompositionStep, PartAnswer, combine
from qa.pipeline.decompose import Plan, plan_question
from qa.pipeline.factory import Pipeline
from qa.pipeline.presets import PipelineConfig
from qa.pipeline.run import PipelineRun
from qa.pipeline.runner import answer_question


def part_config(config: PipelineConfig, plan: Plan) -> PipelineConfig:
    """The configuration each part runs with: the preset without the split and, for a question that
    was split, without clarifying questions. The planner made each part stand alone, and a part
    saying "those elections (Mali)" is not the analyst pointing at something unnamed; asking back
    about a part gave analyst-bench train clarifying questions instead of cited answers."""
    config = replace(config, decompose=False)
    if plan.decomposed and config.turns is not None:
        config = replace(config, turns=replace(config.turns, clarify=False))
    return config


def answer_in_parts(question: str, *, pipeline: Pipeline, preset: str = "") -> PipelineRun:
    plan = plan_question(question, llm=pipeline.llm, models=pipeline.models)
    parts_pipeline = replace(pipeline, config=part_config(pipeline.config, plan))
    runs = [answer_question(part, pipeline=parts_pipeline) for part in plan.parts]
    parts = [
        PartAnswer(text, run.answer, 0, run.failure.message if run.failure else "")
        for text, run in zip(plan.parts, runs, strict=True)
    ]
    answer, records = combine(plan, parts)
    run = PipelineRun(question=question, preset=preset or pipeline.config.name)
    for part_run in runs:  # the parts' stage timings, summed: what answering the question took
        run = run.added(**part_run.timings)
    return replace(run, answer=answer, decomposition=DecompositionStep(plan=plan, parts=records))
