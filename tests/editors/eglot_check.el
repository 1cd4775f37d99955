;;; eglot_check.el --- run by tests/suites/emacs.sh -*- lexical-binding: t -*-

;; Emacs in batch mode, after docs/editors/emacs/cmt-mode.el, with the
;; documented hook (eglot-ensure on cmt-mode-hook): opens $CMT_EXAMPLE (an
;; example with a misspelt statement on line 34) and, through eglot and the
;; real `cmtc lsp', writes what Emacs shows, one fact per line, to
;; $CMT_OUT: the Flymake diagnostics, the ElDoc hover, where M-. goes,
;; the buffer after eglot-format-buffer, and the line after completing
;; `use std.' in $CMT_USE with completion-at-point.

(require 'cl-lib)
(require 'seq)
(require 'eglot)
(require 'xref)

(defvar cmt-test-out nil)
(defun cmt-test-emit (fmt &rest args)
  (push (replace-regexp-in-string "\n" " " (apply #'format fmt args)) cmt-test-out))
(defun cmt-test-finish ()
  (with-temp-file (getenv "CMT_OUT")
    (insert (mapconcat #'identity (reverse cmt-test-out) "\n") "\n"))
  (kill-emacs 0))
(defun cmt-test-wait (pred seconds)
  "Runs the event loop until PRED holds or SECONDS pass; PRED's value."
  (let ((deadline (+ (float-time) seconds)) value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    value))
(defun cmt-test-goto (line text)
  "Point on the first TEXT of LINE."
  (goto-char (point-min))
  (forward-line (1- line))
  (search-forward text (line-end-position))
  (goto-char (match-beginning 0)))
(defun cmt-test-open (file)
  "Visits FILE as a user does; eglot-ensure connects after the command."
  (find-file file)
  (run-hooks 'post-command-hook)
  (cmt-test-wait (lambda () (and (eglot-current-server) eglot--managed-mode)) 10))

;; Any error ends the run with what was gathered so far.
(condition-case err
    (progn
      (add-hook 'cmt-mode-hook #'eglot-ensure)
      (cmt-test-emit "managed %s %s" (and (cmt-test-open (getenv "CMT_EXAMPLE")) t) major-mode)
      (let ((example (current-buffer)))
        ;; Flymake's diagnostics.
        (unless (cmt-test-wait (lambda () (flymake-start) (flymake-diagnostics)) 15)
          (cmt-test-emit "no diagnostics"))
        (dolist (d (sort (flymake-diagnostics)
                         (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))
          (save-excursion
            (goto-char (flymake-diagnostic-beg d))
            (cmt-test-emit "diag %d:%d %s %s" (line-number-at-pos) (1+ (current-column))
                           (flymake-diagnostic-type d)
                           (car (split-string (flymake-diagnostic-text d) "\n")))))

        ;; Hover, as ElDoc asks eglot for it: on `comet_edge' in line 31.
        (cmt-test-goto 31 "comet_edge")
        (let (hover)
          (eglot-hover-eldoc-function (lambda (info &rest _) (setq hover (or info "none"))))
          (cmt-test-wait (lambda () hover) 10)
          (cmt-test-emit "hover %s" (or hover "no answer")))

        ;; M-. on `gemm_softmax' in that line goes into the standard library.
        (cmt-test-goto 31 "gemm_softmax")
        (xref-find-definitions (xref-backend-identifier-at-point (xref-find-backend)))
        (cmt-test-emit "definition %s:%d" buffer-file-name (line-number-at-pos))
        (switch-to-buffer example)

        ;; eglot-format-buffer puts a mangled line back.
        (let ((before (buffer-string)))
          (goto-char (point-min))
          (forward-line 32)
          (delete-region (point) (line-end-position))
          (insert "  tile   GLB:m  64 ;")
          (eglot-format-buffer)
          (goto-char (point-min))
          (forward-line 32)
          (cmt-test-emit "line33 %s" (buffer-substring (point) (line-end-position)))
          (cmt-test-emit "formatted %s" (equal before (buffer-string)))))

      ;; Completion after `use std.': completion-at-point with a
      ;; completion-in-region function that picks std.ops.gemm, as a user
      ;; picks it from *Completions*.
      (cmt-test-emit "use managed %s" (and (cmt-test-open (getenv "CMT_USE")) t))
      (goto-char (point-min))
      (end-of-line)
      (let* (candidates
             (completion-in-region-function
              (lambda (start end collection &optional predicate)
                (setq candidates (all-completions (buffer-substring start end) collection predicate))
                (let ((choice (seq-find (lambda (c) (string-match-p "\\(?:\\`\\|\\.\\)ops\\.gemm\\'" c))
                                        candidates))
                      (exit (plist-get completion-extra-properties :exit-function)))
                  (when choice
                    (delete-region start end)
                    (goto-char start)
                    (insert choice)
                    (when exit (funcall exit choice 'finished)))
                  t))))
        (completion-at-point)
        (cmt-test-emit "completion %d candidates" (length candidates)))
      (cmt-test-emit "use_line %s" (buffer-substring (line-beginning-position) (line-end-position))))
  (error (cmt-test-emit "error %S" err)))
(cmt-test-finish)
