"""python manage.py evaluate --user NAME --benchmark NAME [--preset P|all|flows] [--split S] [--json OUT]
    [--limit N]
python manage.py evaluate --compare RUN_A RUN_B

P is a built-in preset or a preset of the benchmark corpus's team (saved in the
browser or through /api/team-presets/). Runs every case of the benchmark through
each preset in this process (one
EvaluationRun per preset, kept for --compare and the API), with a progress
bar, and prints the metrics table (``review.evaluation.report.results_table``:
on analyst-bench's train split the report's layout, with the published
numbers, the report's own outputs re-scored by the same metric code, and ours).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from documents.errors import DomainError
from documents.management.users import command_user
from qa.presets import FLOW_PRESETS, default_preset
from review import selectors
from review.evaluation.compare import compare_results, format_comparison
from review.evaluation.report import results_table
from review.models import Benchmark, EvaluationRun
from review.services import evaluation as service


class Command(BaseCommand):
    help = "Evaluate QA presets on a benchmark, or compare two evaluation runs."
    # Tests and scripts may pass their own answer function and judge through call_command.
    stealth_options = ("answer_fn", "judge")

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", help="Benchmark name.")
        parser.add_argument(
            "--preset",
            default=None,
            help="A preset name (built-in, or a preset of the benchmark corpus's team), 'all' (every "
            "built-in one), or 'flows' (the four flows: none, rewrite, answerability, rewrite + "
            "answerability, side by side). Default: QA_DEFAULT_PRESET.",
        )
        parser.add_argument("--split", choices=["train", "dev", "test"], help="Default: every split.")
        parser.add_argument("--limit", type=int, help="Only the first N cases (in split, case id order).")
        parser.add_argument(
            "--json", type=Path, dest="json_out", help='Write {"metrics", "cases", "preset"} here.'
        )
        parser.add_argument("--convention", choices=list(service.CONVENTIONS), default="report")
        parser.add_argument(
            "--user", help="Username the run and its questions belong to (required to run; none is created)."
        )
        parser.add_argument("--compare", nargs=2, type=int, metavar=("RUN_A", "RUN_B"))

    def handle(self, *args, **options):
        if options["compare"]:
            return self._compare(*options["compare"])
        if not options["benchmark"]:
            raise CommandError("Give --benchmark NAME (or --compare RUN_A RUN_B).")
        user = command_user(options["user"], acts="the evaluation run and its questions belong to that user")
        benchmark = Benchmark.objects.filter(name=options["benchmark"]).select_related("corpus").first()
        if benchmark is None:
            raise CommandError(f"No benchmark named {options['benchmark']!r}.")
        answer_fn = options.get("answer_fn")
        preset = options["preset"] or default_preset()
        try:
            presets = {"all": list(service.preset_names()), "flows": list(FLOW_PRESETS)}.get(preset, [preset])
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        if preset == "all":
            presets = self._skip_presets_needing_an_llm(presets)
        runs = [self._run(benchmark, name, options, user, answer_fn) for name in presets]
        # A run that answered nothing measured the setup (no LLM, say), not the preset.
        ours = {run.preset: run.metrics for run in runs if run.status == EvaluationRun.Status.DONE}
        self.stdout.write(self._table(benchmark, ours, options["split"]))
        if len(runs) == 1:
            for key, value in runs[0].metrics.items():
                self.stdout.write(f"  {key}: {'-' if value is None else f'{value:.4f}'}")
        if options["json_out"]:
            payloads = [self._payload(run) for run in runs]
            data = payloads[0] if len(payloads) == 1 else {"runs": payloads}
            options["json_out"].write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
            self.stdout.write(f"Wrote {options['json_out']}.")
        failed = [run for run in runs if run.status != EvaluationRun.Status.DONE]
        if failed:
            raise CommandError(
                "; ".join(f"run {run.pk} ({run.preset}) failed: {run.error}" for run in failed)
            )

    def _skip_presets_needing_an_llm(self, presets: list[str]) -> list[str]:
        """Without an LLM, ``--preset all`` leaves out what only an LLM can answer (llm-only).

        The other LLM presets still run, with the no-LLM substitutes their traces list.
        """
        if settings.QA_LLM_PROVIDER != "none":
            return presets
        kept = []
        for name in presets:
            if service.preset_config(name).get("retrieval") is None:
                self.stderr.write(f"{name}: skipped, it needs an LLM and QA_LLM_PROVIDER is none.")
            else:
                kept.append(name)
        return kept

    def _run(self, benchmark, preset, options, user, answer_fn) -> EvaluationRun:
        try:
            config = service.preset_config(preset, team=benchmark.corpus.team)
        except DomainError as exc:
            if answer_fn is None:
                raise CommandError(str(exc)) from exc
            config = {"name": preset}  # an injected answer function brings its own pipeline
        try:
            run = service.evaluation_run_create(
                benchmark=benchmark,
                preset=preset,
                user=user,
                split=options["split"] or "",
                limit=options["limit"],
                convention=options["convention"],
                config=config,
                enqueue=False,
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        extra = {} if "judge" not in options else {"judge": options["judge"]}
        with tqdm(total=run.progress_total, desc=preset, unit="case", disable=None) as bar:
            run = service.evaluation_run_execute(
                run_id=run.pk, answer_fn=answer_fn, on_progress=bar.update, **extra
            )
        self.stdout.write(
            f"run {run.pk}: preset {preset}, {run.progress_total} case(s) of {benchmark.name} "
            f"v{run.benchmark_version}, {run.status}{f' ({run.error})' if run.error else ''}"
        )
        return run

    def _table(self, benchmark: Benchmark, ours: dict, split: str | None) -> str:
        table = results_table(
            ours,
            title=f"{benchmark.name} v{benchmark.version}, split {split or 'all'}",
            source_format=benchmark.source_format,
            source_path=benchmark.source_path,
            split=split,
        )
        for warning in table.warnings:
            self.stderr.write(f"warning: {warning}")
        return table.text

    def _payload(self, run: EvaluationRun) -> dict:
        cases = [
            {
                "case_id": result.gold_case.case_id,
                "split": result.gold_case.split,
                "question": result.gold_case.question,
                "gold_revision": result.gold_revision,
                "question_id": result.question_id,
                "answer_id": result.answer_id,
                "prediction": result.prediction,
                "metrics": result.metrics,
                "error": result.error,
            }
            for result in selectors.run_case_results(run)
        ]
        return {
            "run": run.pk,
            "benchmark": {"name": run.benchmark.name, "version": run.benchmark_version},
            "split": run.split or None,
            "preset": {"name": run.preset, "config": run.preset_config},
            "metrics": run.metrics,
            "cases": cases,
        }

    def _compare(self, run_a_id: int, run_b_id: int) -> None:
        runs = {run.pk: run for run in EvaluationRun.objects.filter(pk__in=[run_a_id, run_b_id])}
        for run_id in (run_a_id, run_b_id):
            if run_id not in runs:
                raise CommandError(f"No evaluation run {run_id}.")
            if runs[run_id].status != EvaluationRun.Status.DONE:
                raise CommandError(f"Run {run_id} is {runs[run_id].status}, not done: nothing to compare.")
        run_a, run_b = runs[run_a_id], runs[run_b_id]
        if run_a.benchmark_id != run_b.benchmark_id:
            self.stderr.write("warning: the runs are on different benchmarks; cases are matched by split/id.")

        def rows(run):
            return {
                selectors.evaluation_case_id(r.gold_case): r.metrics for r in selectors.run_case_results(run)
            }

        comparison = compare_results(run_a.metrics, run_b.metrics, rows(run_a), rows(run_b))
        label_a, label_b = f"run {run_a.pk} {run_a.preset}", f"run {run_b.pk} {run_b.preset}"
        self.stdout.write(format_comparison(comparison, label_a, label_b))
